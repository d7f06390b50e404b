import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, describeError, unwrap, type Schemas } from '../api';
import { useCan } from '../caller';
import { ErrorNote, Loading, Time, useConfirm, useLoad, usePolling } from '../ui';
import { ApplicationName, Watermark } from './sessions';

type Event = Schemas['Event'];
/** Pages read to show a session (1,000 events each); a longer one says so. */
const MAX_PAGES = 10;
const POLL_MS = 3000;
/** Processing statuses with nothing left to do until something changes: an ended session in one of them is not followed. */
const SETTLED = ['completed', 'billing_blocked', 'capture_disabled'] as const;

async function loadSession(sessionId: string) {
  const path = { sessionId };
  let detail = await unwrap(
    api.GET('/v3/rest/agent-conversations/sessions/{sessionId}', { params: { path, query: { eventLimit: 1000 } } }),
  );
  const events = [...detail.events];
  for (let pages = 1; detail.nextAfterSequence !== null && pages < MAX_PAGES; pages++) {
    detail = await unwrap(
      api.GET('/v3/rest/agent-conversations/sessions/{sessionId}', {
        params: { path, query: { eventLimit: 1000, afterSequence: detail.nextAfterSequence } },
      }),
    );
    events.push(...detail.events);
  }
  const signals = await unwrap(api.GET('/v3/rest/signals', { params: { query: { sessionId, limit: 100 } } }));
  // Its metered units: every processed response since the session began.
  const usage = await unwrap(api.GET('/v3/rest/usage', { params: { query: { sessionId, from: detail.createdAt } } }));
  return { session: detail, events, truncated: detail.nextAfterSequence !== null, signals: signals.signals, usage };
}

/** A row of the timeline: an event (with the feedback on it), a gap in the sequences, or the watermark. */
type Row =
  | { kind: 'event'; event: Event; feedback: Event[] }
  | { kind: 'gap'; from: number; to: number }
  | { kind: 'watermark'; through: number };

/** Events in sequence order, gaps as gaps, feedback under the response it targets, the watermark where it stands. */
export function timeline(events: readonly Event[], processedThrough: number | null): Row[] {
  const byTarget = new Map<string, Event[]>();
  const targets = new Set(events.filter((e) => e.type === 'assistant_message').map((e) => e.externalEventId));
  for (const e of events) {
    const target = e.feedback?.targetEventExternalId;
    if (e.type === 'feedback' && target && targets.has(target)) byTarget.set(target, [...(byTarget.get(target) ?? []), e]);
  }
  const rows: Row[] = [];
  let previous: number | null = null;
  let marked = processedThrough === null;
  for (const e of events) {
    if (!marked && e.sequence > (processedThrough as number)) {
      rows.push({ kind: 'watermark', through: processedThrough as number });
      marked = true;
    }
    if (previous !== null && e.sequence > previous + 1) rows.push({ kind: 'gap', from: previous + 1, to: e.sequence - 1 });
    previous = e.sequence;
    const attached = e.type === 'feedback' && e.feedback?.targetEventExternalId && targets.has(e.feedback.targetEventExternalId);
    if (!attached) rows.push({ kind: 'event', event: e, feedback: byTarget.get(e.externalEventId) ?? [] });
  }
  if (!marked && events.length) rows.push({ kind: 'watermark', through: processedThrough as number });
  return rows;
}

const LABEL: Record<Event['type'], string> = { user_message: 'User', assistant_message: 'Assistant', feedback: 'Feedback' };

const formatCount = (n: number) => n.toLocaleString('en');
/** A latency as a person reads it: 930 ms, 2.4 s. */
export const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`);

/** What an answer reports: its model (provider/name), its tokens in and out, its latency. */
export function answerFacts(event: Pick<Event, 'model' | 'usage'>): string[] {
  const facts: string[] = [];
  const model = [event.model?.provider, event.model?.name].filter(Boolean).join('/');
  if (model) facts.push(model);
  const u = event.usage;
  if (u?.inputTokens !== undefined || u?.outputTokens !== undefined)
    facts.push(
      `${u.inputTokens === undefined ? '?' : formatCount(u.inputTokens)} in / ${u.outputTokens === undefined ? '?' : formatCount(u.outputTokens)} out tokens`,
    );
  if (u?.latencyMs !== undefined) facts.push(duration(u.latencyMs));
  return facts;
}

function FeedbackNote({ event }: { event: Event }) {
  const f = event.feedback;
  return (
    <div class="feedback" aria-label="Feedback">
      {f?.rating && <span class={`badge ${f.rating}`}>{f.rating}</span>}
      {f?.labels?.map((l) => (
        <span key={l} class="badge">
          {l}
        </span>
      ))}
      {f?.comment && <q>{f.comment}</q>}
      <span class="muted"> · #{event.sequence}</span>
    </div>
  );
}

function EventRow({ event, feedback }: { event: Event; feedback: Event[] }) {
  return (
    <li class={`event ${event.type}`} data-sequence={event.sequence}>
      <div class="event-head">
        <strong>{LABEL[event.type]}</strong>
        <span class="muted">
          #{event.sequence} · <Time at={event.occurredAt} />
          {event.previousRevisionCount > 0 && (
            <>
              {' '}
              · <span class="badge">revision {event.revision}</span> ({event.previousRevisionCount} earlier)
            </>
          )}
          {event.final === false && ' · streaming'}
        </span>
        {event.type === 'assistant_message' && answerFacts(event).length > 0 && (
          <span class="answer-facts" data-testid="answer-facts">
            {answerFacts(event).join(' · ')}
          </span>
        )}
      </div>
      {event.contentStored ? (
        event.content !== undefined ? (
          <p class="content">{event.content}</p>
        ) : (
          event.type === 'feedback' && <FeedbackNote event={event} />
        )
      ) : (
        <p class="muted">Content removed (retention or content capture).</p>
      )}
      {event.toolCalls && event.toolCalls.length > 0 && <p class="muted">Tools: {event.toolCalls.map((t) => t.name).join(', ')}</p>}
      {feedback.map((f) => (
        <FeedbackNote key={f.externalEventId} event={f} />
      ))}
    </li>
  );
}

/** The tokens a session's answers report, and how many reported them when not all did. */
function AnswerTokens({ totals }: { totals: Schemas['AnswerTotals'] }) {
  if (totals.answersWithUsage === 0) return <span class="muted">not reported</span>;
  return (
    <>
      {formatCount(totals.inputTokens)} in / {formatCount(totals.outputTokens)} out
      {totals.answersWithUsage < totals.answers && (
        <span class="muted">
          {' '}
          (reported by {totals.answersWithUsage} of {totals.answers} answers)
        </span>
      )}
    </>
  );
}

/** Deleting a session: what goes and what stays, said before it happens. */
function DeleteSession({ session }: { session: Schemas['SessionDetail'] }) {
  const { route } = useLocation();
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const remove = async () => {
    const ok = await ask({
      title: `Delete ${session.externalSessionId}?`,
      body: (
        <ul>
          <li>Its {session.eventCount} events, their revisions, its participants, signals and analyses are permanently deleted.</li>
          <li>Its metered usage stays, without content. Events sent again later make a new session.</li>
        </ul>
      ),
      action: 'Delete session',
    });
    if (!ok) return;
    try {
      await unwrap(api.DELETE('/v3/rest/agent-conversations/sessions/{sessionId}', { params: { path: { sessionId: session.sessionId } } }));
      route('/console/sessions');
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="delete-title" class="danger-zone">
      <h2 id="delete-title">Delete the session</h2>
      <ErrorNote error={error} />
      <button type="button" class="danger" onClick={() => void remove()}>
        Delete session
      </button>
      {dialog}
    </section>
  );
}

export function SessionPage() {
  const { params } = useRoute();
  const id = params.sessionId ?? '';
  const view = useLoad(() => loadSession(id), [id]);
  const s = view.data?.session;
  // Followed while something can still change: open (more events may come), or processing not settled.
  const moving = !!s && (s.status === 'open' || !(SETTLED as readonly string[]).includes(s.processingStatus));
  usePolling(view.reload, POLL_MS, moving);
  const admin = useCan('admin');

  if (!view.data)
    return (
      <main id="main">
        <h1>Session</h1>
        <ErrorNote error={view.error} />
        {!view.error && <Loading what="the session" />}
      </main>
    );
  const { session, events, truncated, signals, usage } = view.data;
  return (
    <main id="main">
      <p>
        <a href="/console/sessions">Sessions</a> /
      </p>
      <h1>{session.externalSessionId}</h1>
      <ErrorNote error={view.error} />
      <dl class="facts">
        <dt>Status</dt>
        <dd data-testid="status">{session.status}</dd>
        <dt>Processing</dt>
        <dd>
          <span class={`badge ${session.processingStatus}`} data-testid="processing">
            {session.processingStatus.replace('_', ' ')}
          </span>
        </dd>
        <dt>Processed through</dt>
        <dd data-testid="watermark">
          <Watermark session={session} />
        </dd>
        <dt>Events</dt>
        <dd>{session.eventCount}</dd>
        <dt>Metered units</dt>
        <dd data-testid="units">
          {usage.quantity} {usage.unit.replace(/_/g, ' ')}
        </dd>
        <dt>Answers</dt>
        <dd data-testid="answers">{formatCount(session.answerTotals.answers)}</dd>
        <dt>Tokens</dt>
        <dd data-testid="tokens">
          <AnswerTokens totals={session.answerTotals} />
        </dd>
        <dt>Median latency</dt>
        <dd data-testid="latency">
          {session.answerTotals.medianLatencyMs === null ? (
            <span class="muted">not reported</span>
          ) : (
            duration(session.answerTotals.medianLatencyMs)
          )}
        </dd>
        <dt>Application</dt>
        <dd>
          {admin ? (
            <a href={`/console/applications/${session.applicationId}`}>
              <ApplicationName id={session.applicationId} name={session.applicationName} />
            </a>
          ) : (
            <ApplicationName id={session.applicationId} name={session.applicationName} />
          )}
        </dd>
        <dt>Agent version</dt>
        <dd>{session.agentVersion ?? '—'}</dd>
        <dt>Started</dt>
        <dd>
          <Time at={session.createdAt} />
        </dd>
        <dt>Ended</dt>
        <dd>
          <Time at={session.endedAt} />
        </dd>
      </dl>
      {moving && (
        <p class="muted" aria-live="polite">
          Updating every few seconds while the session is open or being processed.
        </p>
      )}
      {session.processingStatus === 'billing_blocked' && (
        <p data-testid="processing-note">
          Analyses wait for credits: the organization's balance cannot pay for them. Explicit feedback and metering go on, and the analyses
          resume by themselves when your Intake operator adds credits (see Usage and credits).
        </p>
      )}
      {session.processingStatus === 'capture_disabled' && (
        <p data-testid="processing-note">
          Content capture is off for this application: only counts, status and metering are kept, nothing is analysed, and no signals will
          come. An admin turns it on in the application's settings.
        </p>
      )}
      {session.participants.length > 0 && (
        <section aria-labelledby="participants-title">
          <h2 id="participants-title">Participants</h2>
          <ul>
            {session.participants.map((p, i) => (
              <li key={p.externalId ?? i}>{[p.displayName, p.email, p.externalId].filter(Boolean).join(' · ') || 'anonymous'}</li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="events-title">
        <h2 id="events-title">Conversation</h2>
        {events.length === 0 && <p>No events yet.</p>}
        <ol class="timeline">
          {timeline(events, session.processedThroughSequence).map((row) =>
            row.kind === 'event' ? (
              <EventRow key={`e${row.event.sequence}`} event={row.event} feedback={row.feedback} />
            ) : row.kind === 'gap' ? (
              <li key={`g${row.from}`} class="gap">
                {row.from === row.to
                  ? `Sequence ${row.from} not received yet: processing waits for it.`
                  : `Sequences ${row.from}–${row.to} not received yet: processing waits for them.`}
              </li>
            ) : (
              <li key="watermark" class="watermark">
                Processed through sequence {row.through}
              </li>
            ),
          )}
        </ol>
        {truncated && <p class="muted">The first {MAX_PAGES * 1000} events are shown.</p>}
      </section>
      <section aria-labelledby="signals-title">
        <h2 id="signals-title">Signals</h2>
        {signals.length === 0 ? (
          <p class="muted">
            {moving || session.processingStatus === 'billing_blocked'
              ? 'No signals yet.'
              : session.processingStatus === 'capture_disabled'
                ? 'No signals: the conversation is not analysed.'
                : 'No signals were found in this conversation.'}
          </p>
        ) : (
          <table>
            <caption class="visually-hidden">Signals of this session</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Rating</th>
                <th scope="col">Summary</th>
                <th scope="col">About</th>
                <th scope="col">Found</th>
              </tr>
            </thead>
            <tbody>
              {signals.map((g) => (
                <tr key={g.id}>
                  <td>{g.kind ?? g.source}</td>
                  <td>{g.rating ?? '—'}</td>
                  <td>{g.summary ?? g.comment ?? g.labels.join(', ')}</td>
                  <td>
                    <code>{g.eventExternalId}</code>
                  </td>
                  <td>
                    <Time at={g.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <DeleteSession session={session} />
    </main>
  );
}
