import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, describeError, unwrap } from '../api';
import { ErrorNote, Loading, Pager, useLoad } from '../ui';

/** Agent applications: the list, and a new one (admins). */
export function ApplicationsPage() {
  const { route } = useLocation();
  const [page, setPage] = useState(1);
  const list = useLoad(() => unwrap(api.GET('/v3/rest/agent-applications', { params: { query: { page, limit: 50 } } })), [page]);
  const [name, setName] = useState('');
  const [agentKey, setAgentKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await unwrap(api.POST('/v3/rest/agent-applications', { body: { name, agentKey } }));
      route(`/console/applications/${created.applicationId}`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main">
      <h1>Agent applications</h1>
      <p class="lead">Each agent whose conversations you send is an application, with its own settings and ingest secrets.</p>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="applications" />}
      {list.data && (
        <>
          {list.data.applications.length === 0 ? (
            <p>No applications yet: create the first below.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Agent applications</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Agent key</th>
                  <th scope="col">Status</th>
                  <th scope="col">Content capture</th>
                  <th scope="col">Retention</th>
                </tr>
              </thead>
              <tbody>
                {list.data.applications.map((a) => (
                  <tr key={a.applicationId}>
                    <td>
                      <a href={`/console/applications/${a.applicationId}`}>{a.name}</a>
                    </td>
                    <td>
                      <code>{a.agentKey}</code>
                    </td>
                    <td>{a.status}</td>
                    <td>{a.contentCapture ? 'on' : 'off'}</td>
                    <td>{a.retentionDays === null ? 'no limit' : `${a.retentionDays} days`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager page={page} hasMore={list.data.has_more} go={setPage} />
        </>
      )}
      <section aria-labelledby="new-app">
        <h2 id="new-app">New application</h2>
        <form onSubmit={(e) => void create(e)} class="stack">
          <label>
            Name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Agent key
            <input
              required
              pattern="[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}"
              value={agentKey}
              aria-describedby="agent-key-help"
              onInput={(e) => setAgentKey(e.currentTarget.value)}
            />
          </label>
          <p id="agent-key-help" class="help">
            Your agent's stable identifier: letters, digits and <code>. _ : -</code>, up to 128 characters. It cannot change later.
          </p>
          <ErrorNote error={error} />
          <button type="submit" class="primary" disabled={busy}>
            Create application
          </button>
        </form>
      </section>
    </main>
  );
}
