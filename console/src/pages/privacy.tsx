import { useState } from 'preact/hooks';
import { api, describeError, unwrap, type Answer } from '../api';
import { ErrorNote, Time, useConfirm } from '../ui';

type Preview = Answer<'previewPersonErasure'>;
type Erasure = Answer<'getPersonErasure'>;

/** Each place an erasure searches, as a person reads it. */
const PLACES: Record<string, string> = {
  people: 'The person (kept as a tombstone without identity)',
  feedback_records: 'Feedback records by or naming them (deleted)',
  agent_participants: 'Conversation participants (identity removed, counts kept)',
  agent_sessions: 'Conversation sessions naming them (an external id naming them replaced)',
  agent_events: 'Conversation messages naming them',
  agent_event_revisions: 'Earlier revisions of those messages',
  agent_signals: 'Signals naming them',
  recordings: 'Recordings naming them',
  transcript_utterances: 'Transcript lines naming them',
  metadata_values: 'Metadata values naming them',
  coding_sessions: 'Coding-agent sessions naming them',
  domain_events: 'Change events naming them',
  webhook_deliveries: 'Webhook deliveries naming them',
  webhook_delivery_attempts: 'Webhook receivers’ answers naming them',
  metadata_records: 'Recording records whose external id names them (the id replaced)',
  media_ingestions: 'Uploads whose file name names them',
};

function CountsTable({ counts, caption }: { counts: Record<string, number>; caption: string }) {
  const rows = Object.entries(counts).filter(([, n]) => n > 0);
  return rows.length === 0 ? (
    <p class="muted">Nothing else holds them.</p>
  ) : (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Where</th>
          <th scope="col">Rows</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([place, n]) => (
          <tr key={place}>
            <td>{PLACES[place] ?? place}</td>
            <td>{n}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Erase a person: what would be removed is listed first, then confirmed, then followed to the end. */
function ErasePerson() {
  const [email, setEmail] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [erasure, setErasure] = useState<Erasure | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const look = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setPreview(null);
    setErasure(null);
    try {
      setPreview(await unwrap(api.GET('/v3/rest/people/erasure-preview', { params: { query: { email: email.trim() } } })));
    } catch (err) {
      setError(describeError(err));
    }
  };
  const erase = async () => {
    if (!preview) return;
    const who = preview.person.email;
    if (
      !(await ask({
        title: `Erase ${who}?`,
        body: (
          <>
            <p>This cannot be undone. Their e-mail address is removed everywhere Intake keeps it:</p>
            <CountsTable counts={preview.counts} caption="What will be erased" />
            <p>Data naming them that arrives before the erasure finishes is erased too.</p>
          </>
        ),
        action: 'Erase permanently',
      }))
    )
      return;
    try {
      let e = await unwrap(api.POST('/v3/rest/people/{personId}/erase', { params: { path: { personId: preview.person.personUuid } } }));
      setPreview(null);
      setErasure(e);
      while (e.status === 'running') {
        await new Promise((r) => setTimeout(r, 1000));
        e = await unwrap(api.GET('/v3/rest/people/erasures/{erasureId}', { params: { path: { erasureId: e.erasureId } } }));
        setErasure(e);
      }
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="erase-title">
      <h2 id="erase-title">Erase a person</h2>
      <p class="help">
        Removes a person's e-mail address from everything the organization stored: feedback, conversations, recordings, webhooks.
      </p>
      <form onSubmit={(e) => void look(e)} class="stack">
        <label>
          Their e-mail address
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <button type="submit">Show what would be erased</button>
      </form>
      <ErrorNote error={error} />
      {preview && (
        <div class="preview" data-testid="erasure-preview">
          <p>
            <strong>{[preview.person.firstName, preview.person.lastName].filter(Boolean).join(' ') || preview.person.email}</strong> (
            {preview.person.email})
          </p>
          <CountsTable counts={preview.counts} caption="What would be erased now" />
          <button type="button" class="danger" onClick={() => void erase()}>
            Erase {preview.person.email}
          </button>
        </div>
      )}
      {erasure && (
        <div role="status" data-testid="erasure">
          <p>
            {erasure.status === 'finished' ? (
              <>
                Erased; finished <Time at={erasure.finishedAt} />.
              </>
            ) : (
              'Erasing…'
            )}
          </p>
          <CountsTable counts={erasure.counts} caption="Erased so far" />
        </div>
      )}
      {dialog}
    </section>
  );
}

/** The organization's data as NDJSON, downloaded in the browser. */
function ExportOrganization() {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const { data, error: failure, response } = await api.GET('/v3/rest/organization/export', { parseAs: 'blob' });
      if (!response.ok || !data) throw new Error(describeError(failure ?? `The export answered ${response.status}.`));
      const url = URL.createObjectURL(data);
      const a = document.createElement('a');
      a.href = url;
      a.download = `intake-export-${new Date().toISOString().slice(0, 10)}.ndjson`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setDone(`Downloaded ${(data.size / 1024).toFixed(1)} KiB.`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Export the organization</h2>
      <p class="help">
        All its data as NDJSON, one consistent snapshot: feedback, people, recordings with transcripts, conversations with their events and
        signals. A file without its final <code>end</code> line was cut short.
      </p>
      <button type="button" onClick={() => void download()} disabled={busy}>
        {busy ? 'Exporting…' : 'Download the export'}
      </button>
      {done && (
        <p role="status" class="ok">
          {done}
        </p>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

/** Privacy: erase a person, export everything; recordings and sessions are deleted from their pages. */
export function PrivacyPage() {
  return (
    <main id="main">
      <h1>Privacy</h1>
      <p class="lead">
        Delete a single recording or conversation from its page (<a href="/console/recordings">recordings</a>,{' '}
        <a href="/console/sessions">sessions</a>).
      </p>
      <ErasePerson />
      <ExportOrganization />
    </main>
  );
}
