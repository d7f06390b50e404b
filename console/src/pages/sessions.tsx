import { useLocation } from 'preact-iso';
import { api, unwrap, type Schemas } from '../api';
import { useApplicationOptions, useCan } from '../caller';
import { CreatedRange, ErrorNote, FilterSelect, isoOf, Loading, Pager, Time, useListQuery, useLoad } from '../ui';

const STATUSES = ['open', 'ended', 'abandoned'] as const;
/**
 * The processing statuses reads report (decision 0209): `pending` while events wait, `processing`
 * while analyses run, `completed` when nothing is left.
 */
const PROCESSING = ['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled'] as const;
type Status = (typeof STATUSES)[number];
type Processing = (typeof PROCESSING)[number];

/** How far processing has come: every event through the watermark is processed. */
export function Watermark({ session }: { session: Pick<Schemas['Session'], 'processedThroughSequence' | 'highestSequence'> }) {
  const { processedThroughSequence: done, highestSequence: top } = session;
  if (top === null) return <span class="muted">no events</span>;
  return (
    <span>
      {done === null ? 'none' : done} of {top}
    </span>
  );
}

/** An application by its name, or a short id with the whole one on hover when no name is known (a deleted application). */
export function ApplicationName({ id, name }: { id: string; name: string | null | undefined }) {
  return name ? <>{name}</> : <code title={id}>{id.slice(0, 8)}</code>;
}

/** Sessions, filtered by application, status, processing status and when they started; the filters live in the URL. */
export function SessionsPage() {
  const { query } = useLocation();
  const applicationId = query.applicationId || undefined;
  const status = (STATUSES as readonly string[]).includes(query.status ?? '') ? (query.status as Status) : undefined;
  const processingStatus = (PROCESSING as readonly string[]).includes(query.processingStatus ?? '')
    ? (query.processingStatus as Processing)
    : undefined;
  const { after, before } = query;
  const { page, go } = useListQuery('/console/sessions', { applicationId, status, processingStatus, after, before });
  const appOptions = useApplicationOptions();
  const admin = useCan('admin');
  const list = useLoad(
    () =>
      unwrap(
        api.GET('/v3/rest/agent-conversations/sessions', {
          params: {
            query: { applicationId, status, processingStatus, createdFrom: isoOf(after), createdTo: isoOf(before), page, limit: 50 },
          },
        }),
      ),
    [applicationId, status, processingStatus, after, before, page],
  );
  const filtered = !!(applicationId || status || processingStatus || after || before);

  return (
    <main id="main">
      <h1>Sessions</h1>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        {appOptions ? (
          <FilterSelect
            label="Application"
            value={applicationId}
            options={appOptions}
            onChange={(v) => go({ applicationId: v, page: '1' })}
          />
        ) : (
          <label>
            Application
            {/* Members cannot list applications: the id then. */}
            <input
              value={applicationId ?? ''}
              placeholder="application id"
              onChange={(e) => go({ applicationId: e.currentTarget.value.trim() || undefined, page: '1' })}
            />
          </label>
        )}
        <FilterSelect
          label="Status"
          value={status}
          options={STATUSES.map((x) => [x, x] as const)}
          onChange={(v) => go({ status: v, page: '1' })}
        />
        <FilterSelect
          label="Processing"
          value={processingStatus}
          options={PROCESSING.map((x) => [x, x.replace('_', ' ')] as const)}
          onChange={(v) => go({ processingStatus: v, page: '1' })}
        />
      </form>
      <CreatedRange
        legend="Started between"
        fromLabel="Started from"
        toLabel="Started before"
        after={after}
        before={before}
        go={(range) => go({ ...range, page: '1' })}
      />
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="sessions" />}
      {list.data && list.data.sessions.length === 0 && filtered && <p>No sessions match these filters.</p>}
      {list.data && list.data.sessions.length === 0 && !filtered && (
        <p>
          No sessions yet. A session appears when an agent sends its first events with an application's ingest secret (
          <code>POST /v3/rest/agent-conversations/ingest</code>, docs/guides/agent-conversations.md)
          {admin ? (
            <>
              : create an application and its secret under <a href="/console/applications">Agent applications</a>.
            </>
          ) : (
            ': an admin of your organization creates the application and its secret.'
          )}
        </p>
      )}
      {list.data && list.data.sessions.length > 0 && (
        <table>
          <caption class="visually-hidden">Sessions</caption>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Application</th>
              <th scope="col">Status</th>
              <th scope="col">Processing</th>
              <th scope="col">Events</th>
              <th scope="col">Processed through</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.sessions.map((s) => (
              <tr key={s.sessionId}>
                <td>
                  <a href={`/console/sessions/${s.sessionId}`}>{s.externalSessionId}</a>
                </td>
                <td>
                  <ApplicationName id={s.applicationId} name={s.applicationName} />
                </td>
                <td>{s.status}</td>
                <td>
                  <span class={`badge ${s.processingStatus}`}>{s.processingStatus.replace('_', ' ')}</span>
                </td>
                <td>{s.eventCount}</td>
                <td>
                  <Watermark session={s} />
                </td>
                <td>
                  <Time at={s.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={(p) => go({ page: String(p) })} />}
    </main>
  );
}
