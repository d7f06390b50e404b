import { useState } from 'preact/hooks';
import { api, describeError, unwrap, type Answer, type Body } from '../api';
import { useCan } from '../caller';
import { ErrorNote, Loading, Pager, ShownOnce, Time, useConfirm, useLoad } from '../ui';

type Scope = NonNullable<Body<'createApiKey'>['scopes']>[number];
type ApiKey = Answer<'listApiKeys'>['apiKeys'][number];
type Grant = Answer<'listMyGrants'>['grants'][number];
/** Every scope a key may hold, each said plainly (checked against the API's types: a scope added there fails the build here). */
const SCOPES: Record<Scope, string> = {
  'feedback:write': 'Send feedback sources, people and records',
  'feedback:read': 'Read feedback',
  'recordings:read': 'Read recordings, transcripts and media',
  'recordings:write': 'Create, upload and delete recordings',
  'agents:read': 'Read agent sessions and usage',
  'agents:write': 'Delete agent sessions',
  'signals:read': 'Read signals',
  'webhooks:manage': 'Manage webhook endpoints (sends your data to the URLs they name)',
  admin: 'Administer the organization: keys, users, applications, export, erasure',
};
const PRIVILEGED: Scope[] = ['admin', 'webhooks:manage'];

function ApiKeys() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => unwrap(api.GET('/v3/rest/api-keys', { params: { query: { page, limit: 50 } } })), [page]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>((Object.keys(SCOPES) as Scope[]).filter((s) => !PRIVILEGED.includes(s)));
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const key = await unwrap(api.POST('/v3/rest/api-keys', { body: { name: name || undefined, scopes } }));
      setCreated(key.apiKey);
      setName('');
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  const revoke = async (k: ApiKey) => {
    if (
      !(await ask({
        title: `Revoke ${k.name ?? k.displayPrefix}?`,
        body: <p>Requests with this key are refused from now on. This cannot be undone: a new key is a new secret.</p>,
        action: 'Revoke key',
      }))
    )
      return;
    try {
      await unwrap(api.DELETE('/v3/rest/api-keys/{apiKeyId}', { params: { path: { apiKeyId: k.apiKeyId } } }));
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p class="help">
        Servers send a key as <code>X-Service-Api-Key</code>. A key holds only the scopes chosen, and only scopes you hold.
      </p>
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Loading what="keys" />}
      {list.data && list.data.apiKeys.length > 0 && (
        <table>
          <caption class="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.data.apiKeys.map((k) => (
              <tr key={k.apiKeyId}>
                <td>{k.name ?? <span class="muted">unnamed</span>}</td>
                <td>
                  <code>{k.displayPrefix}…</code>
                </td>
                <td>{k.scopes.join(', ')}</td>
                <td>
                  <Time at={k.lastUsedAt} />
                </td>
                <td>
                  {k.revokedAt ? (
                    <>
                      revoked <Time at={k.revokedAt} />
                    </>
                  ) : (
                    <button type="button" onClick={() => void revoke(k)} aria-label={`Revoke ${k.name ?? k.displayPrefix}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={setPage} />}
      {created && <ShownOnce label="New API key" secret={created} onDone={() => setCreated(null)} />}
      <form onSubmit={(e) => void create(e)} class="stack">
        <h3>New key</h3>
        <label>
          Name
          <input value={name} maxLength={200} placeholder="what uses it" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {(Object.entries(SCOPES) as [Scope, string][]).map(([s, what]) => (
            <label key={s} class="scope">
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />{' '}
              <code>{s}</code> {what}
            </label>
          ))}
        </fieldset>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={scopes.length === 0}>
          Create key
        </button>
      </form>
      {dialog}
    </section>
  );
}

function Users() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => unwrap(api.GET('/v3/rest/users', { params: { query: { page, limit: 50 } } })), [page]);
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <p class="help">People who sign in to this organization. Operators add users (intake user create).</p>
      <ErrorNote error={list.error} />
      {list.data && (
        <table>
          <caption class="visually-hidden">Users</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {list.data.users.map((u) => (
              <tr key={u.userId}>
                <td>{u.email}</td>
                <td>{[u.firstName, u.lastName].filter(Boolean).join(' ') || '—'}</td>
                <td>{u.role}</td>
                <td>{u.status}</td>
                <td>
                  <Time at={u.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && <Pager page={page} hasMore={list.data.has_more} go={setPage} />}
    </section>
  );
}

/** The applications the signed-in user approved (MCP clients, this console): each revoked here. */
function Grants() {
  const list = useLoad(() => unwrap(api.GET('/v3/rest/me/grants')), []);
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const revoke = async (g: Grant) => {
    const console = g.clientId === 'intake-console';
    if (
      !(await ask({
        title: `Revoke ${g.clientName ?? g.clientId}?`,
        body: (
          <p>
            {console
              ? 'Every console signed in as you stops working, this one included: you sign in again.'
              : 'Its access and refresh tokens stop working at once; it asks for your approval again next time.'}
          </p>
        ),
        action: 'Revoke access',
      }))
    )
      return;
    try {
      await unwrap(api.DELETE('/v3/rest/me/grants/{grantId}', { params: { path: { grantId: g.grantId } } }));
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="grants-title">
      <h2 id="grants-title">Your connected applications</h2>
      <p class="help">MCP clients you approved, and this console: they act as you until you revoke them.</p>
      <ErrorNote error={list.error ?? error} />
      {list.data && (
        <table>
          <caption class="visually-hidden">Connected applications</caption>
          <thead>
            <tr>
              <th scope="col">Application</th>
              <th scope="col">Scopes</th>
              <th scope="col">Approved</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Revoke</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.grants.map((g) => (
              <tr key={g.grantId}>
                <td>{g.clientName ?? <code>{g.clientId}</code>}</td>
                <td>{g.scopes.join(', ')}</td>
                <td>
                  <Time at={g.grantedAt} />
                </td>
                <td>
                  <Time at={g.expiresAt} />
                </td>
                <td>
                  <button type="button" onClick={() => void revoke(g)} aria-label={`Revoke ${g.clientName ?? g.clientId}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {dialog}
    </section>
  );
}

/** API keys and users (admins), and everyone's own connected applications (all a member has here). */
export function AccessPage() {
  const admin = useCan('admin');
  if (admin === undefined)
    return (
      <main id="main">
        <h1>Keys and access</h1>
        <Loading what="your access" />
      </main>
    );
  return (
    <main id="main">
      <h1>{admin ? 'Keys and access' : 'Connected applications'}</h1>
      {admin && <ApiKeys />}
      {admin && <Users />}
      <Grants />
    </main>
  );
}
