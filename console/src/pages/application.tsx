import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, describeError, unwrap, type Schemas } from '../api';
import { ErrorNote, Loading, ShownOnce, Time, useConfirm, useLoad } from '../ui';

type Application = Schemas['Application'];
type Patch = Partial<Omit<Application, 'applicationId' | 'organizationId' | 'agentKey' | 'createdAt' | 'updatedAt'>>;

/** The form's state: lists as text, one item a line. */
interface Draft {
  name: string;
  status: 'active' | 'disabled';
  contentCapture: boolean;
  redactedFieldNames: string;
  redactedTextPatterns: string;
  retentionDays: string;
  allowedEnvironments: string;
  access: 'workspace' | 'users';
  userIds: string;
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function draftOf(a: Application): Draft {
  return {
    name: a.name,
    status: a.status,
    contentCapture: a.contentCapture,
    redactedFieldNames: a.redactedFieldNames.join('\n'),
    redactedTextPatterns: a.redactedTextPatterns.join('\n'),
    retentionDays: a.retentionDays === null ? '' : String(a.retentionDays),
    allowedEnvironments: a.allowedEnvironments.join('\n'),
    access: a.conversationAccess.type,
    userIds: a.conversationAccess.type === 'users' ? a.conversationAccess.userIds.join('\n') : '',
  };
}

/** What changed, as a PATCH body (absent: unchanged). */
function patchOf(a: Application, d: Draft): Patch {
  const patch: Patch = {};
  if (d.name.trim() !== a.name) patch.name = d.name.trim();
  if (d.status !== a.status) patch.status = d.status;
  if (d.contentCapture !== a.contentCapture) patch.contentCapture = d.contentCapture;
  if (!same(lines(d.redactedFieldNames), a.redactedFieldNames)) patch.redactedFieldNames = lines(d.redactedFieldNames);
  if (!same(lines(d.redactedTextPatterns), a.redactedTextPatterns)) patch.redactedTextPatterns = lines(d.redactedTextPatterns);
  const retention = d.retentionDays.trim() === '' ? null : Number(d.retentionDays);
  if (retention !== a.retentionDays) patch.retentionDays = retention;
  if (!same(lines(d.allowedEnvironments), a.allowedEnvironments)) patch.allowedEnvironments = lines(d.allowedEnvironments);
  const before = a.conversationAccess;
  if (d.access === 'workspace' && before.type !== 'workspace') patch.conversationAccess = { type: 'workspace' };
  if (d.access === 'users' && (before.type !== 'users' || !same(lines(d.userIds), before.userIds)))
    patch.conversationAccess = { type: 'users', userIds: lines(d.userIds) };
  return patch;
}

/** The destructive parts of a change, each said plainly: the confirmation lists them. */
function consequences(a: Application, patch: Patch): string[] {
  const out: string[] = [];
  if (patch.contentCapture === false)
    out.push(
      'Content capture off: only counts and status are kept. On the next ingest of each session, its stored content, participants, jobs and signals are permanently deleted.',
    );
  if (
    patch.retentionDays !== undefined &&
    patch.retentionDays !== null &&
    (a.retentionDays === null || patch.retentionDays < a.retentionDays)
  )
    out.push(`Retention of ${patch.retentionDays} days: conversations older than that are permanently deleted.`);
  const access = patch.conversationAccess;
  if (access?.type === 'users') {
    const kept = new Set(access.userIds);
    const narrowed = a.conversationAccess.type === 'workspace' || a.conversationAccess.userIds.some((u) => !kept.has(u));
    if (narrowed)
      out.push(
        'Access restricted to the listed users: everyone else loses access to existing chats and signals, and switching back to workspace access does not restore it.',
      );
  }
  return out;
}

/** The users who may see the conversations, by e-mail and name (ids are what the API keeps). */
function UserPicker({ value, onChange }: { value: string[]; onChange: (ids: string[]) => void }) {
  const users = useLoad(() => unwrap(api.GET('/v3/rest/users', { params: { query: { limit: 100 } } })), []);
  if (!users.data)
    return (
      <>
        <ErrorNote error={users.error} />
        {!users.error && <Loading what="the users" />}
      </>
    );
  const known = new Set(users.data.users.map((u) => u.userId));
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((x) => x !== id));
  return (
    <fieldset>
      <legend>Users with access</legend>
      {users.data.users.map((u) => {
        const name = [u.firstName, u.lastName].filter(Boolean).join(' ');
        return (
          <label key={u.userId} class="scope">
            <input type="checkbox" checked={value.includes(u.userId)} onChange={(e) => toggle(u.userId, e.currentTarget.checked)} />{' '}
            {u.email}
            {name && ` (${name})`}
            {u.status === 'disabled' && <span class="muted"> · disabled</span>}
          </label>
        );
      })}
      {value
        .filter((id) => !known.has(id))
        .map((id) => (
          <label key={id} class="scope">
            <input type="checkbox" checked onChange={() => toggle(id, false)} /> <code>{id}</code>{' '}
            <span class="muted">(not among the users listed here)</span>
          </label>
        ))}
      {users.data.has_more && <p class="help">The first 100 users are listed.</p>}
    </fieldset>
  );
}

function Setting({ title, help, children, id }: { title: string; help: string; children: ComponentChildren; id: string }) {
  return (
    <div class="setting">
      <div class="setting-control">{children}</div>
      <p class="help" id={`${id}-help`}>
        <strong>{title}.</strong> {help}
      </p>
    </div>
  );
}

export function ApplicationPage() {
  const { params } = useRoute();
  const id = params.applicationId ?? '';
  const app = useLoad(
    () => unwrap(api.GET('/v3/rest/agent-applications/{applicationId}', { params: { path: { applicationId: id } } })),
    [id],
  );
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const { ask, dialog } = useConfirm();
  useEffect(() => {
    if (app.data) setDraft(draftOf(app.data));
  }, [app.data]);

  if (app.error)
    return (
      <main id="main">
        <h1>Agent application</h1>
        <ErrorNote error={app.error} />
      </main>
    );
  if (!app.data || !draft)
    return (
      <main id="main">
        <Loading what="the application" />
      </main>
    );
  const a = app.data;
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => {
    setSaved(false);
    setDraft({ ...draft, [k]: v });
  };

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const patch = patchOf(a, draft);
    if (Object.keys(patch).length === 0) return setError('Nothing changed.');
    const warn = consequences(a, patch);
    if (
      warn.length &&
      !(await ask({
        title: 'Save these settings?',
        body: (
          <ul>
            {warn.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        ),
        action: 'Save and apply',
      }))
    )
      return;
    try {
      await unwrap(api.PATCH('/v3/rest/agent-applications/{applicationId}', { params: { path: { applicationId: id } }, body: patch }));
      setSaved(true);
      app.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    <main id="main">
      <p>
        <a href="/console/applications">Agent applications</a> /
      </p>
      <h1>{a.name}</h1>
      <p class="muted">
        Agent key <code>{a.agentKey}</code> · created <Time at={a.createdAt} /> ·{' '}
        <a href={`/console/sessions?applicationId=${a.applicationId}`}>its sessions</a>
      </p>
      <form onSubmit={(e) => void save(e)} aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <Setting id="name" title="Name" help="How the application is shown here and in exports.">
          <label>
            Name
            <input
              required
              maxLength={200}
              value={draft.name}
              onInput={(e) => set('name', e.currentTarget.value)}
              aria-describedby="name-help"
            />
          </label>
        </Setting>
        <Setting
          id="status"
          title="Status"
          help="Active accepts ingests; Disabled refuses new ones (403 application_disabled) without deleting stored conversations."
        >
          <fieldset aria-describedby="status-help">
            <legend>Status</legend>
            {(['active', 'disabled'] as const).map((s) => (
              <label key={s} class="inline">
                <input type="radio" name="status" value={s} checked={draft.status === s} onChange={() => set('status', s)} />{' '}
                {s === 'active' ? 'Active' : 'Disabled'}
              </label>
            ))}
          </fieldset>
        </Setting>
        <Setting
          id="capture"
          title="Content capture"
          help="When off, only counts and status are retained. On the next ingest for a session, its stored content, participants, jobs and signals are permanently deleted."
        >
          <label class="inline">
            <input
              type="checkbox"
              checked={draft.contentCapture}
              onChange={(e) => set('contentCapture', e.currentTarget.checked)}
              aria-describedby="capture-help"
            />{' '}
            Content capture
          </label>
        </Setting>
        <Setting
          id="fields"
          title="Redacted field names"
          help="One a line. Matching keys are removed from message payloads, feedback, model metadata, usage, traces, context and participant identity fields, before storage."
        >
          <label>
            Redacted field names
            <textarea
              rows={3}
              value={draft.redactedFieldNames}
              onInput={(e) => set('redactedFieldNames', e.currentTarget.value)}
              aria-describedby="fields-help"
            />
          </label>
        </Setting>
        <Setting
          id="patterns"
          title="Redacted text patterns"
          help="One a line. This exact sensitive text is replaced before storage. Common secrets (tokens, keys, private keys) are masked always."
        >
          <label>
            Redacted text patterns
            <textarea
              rows={3}
              value={draft.redactedTextPatterns}
              onInput={(e) => set('redactedTextPatterns', e.currentTarget.value)}
              aria-describedby="patterns-help"
            />
          </label>
        </Setting>
        <Setting
          id="retention"
          title="Retention"
          help="1 through 3650 days, or blank for no application-specific limit. Reducing retention can permanently delete older conversations."
        >
          <label>
            Retention (days)
            <input
              type="number"
              min={1}
              max={3650}
              value={draft.retentionDays}
              onInput={(e) => set('retentionDays', e.currentTarget.value)}
              aria-describedby="retention-help"
            />
          </label>
        </Setting>
        <Setting
          id="environments"
          title="Allowed environments"
          help="One a line; blank accepts all. With a list, each request must carry an allowed context.environment. It does not choose where the data goes."
        >
          <label>
            Allowed environments
            <textarea
              rows={2}
              value={draft.allowedEnvironments}
              onInput={(e) => set('allowedEnvironments', e.currentTarget.value)}
              aria-describedby="environments-help"
            />
          </label>
        </Setting>
        <Setting
          id="access"
          title="Conversation access"
          help="Workspace access (the default) or the selected users only. Reducing access also restricts existing chats and signals; changing back to workspace access does not restore historical access."
        >
          <fieldset aria-describedby="access-help">
            <legend>Conversation access</legend>
            <label class="inline">
              <input type="radio" name="access" checked={draft.access === 'workspace'} onChange={() => set('access', 'workspace')} />{' '}
              Everyone in the workspace
            </label>
            <label class="inline">
              <input type="radio" name="access" checked={draft.access === 'users'} onChange={() => set('access', 'users')} /> Selected users
            </label>
            {draft.access === 'users' && <UserPicker value={lines(draft.userIds)} onChange={(ids) => set('userIds', ids.join('\n'))} />}
          </fieldset>
        </Setting>
        <ErrorNote error={error} />
        {saved && (
          <p role="status" class="ok">
            Saved.
          </p>
        )}
        <button type="submit" class="primary">
          Save settings
        </button>
      </form>
      <Secrets applicationId={id} />
      <DeleteApplication application={a} />
      {dialog}
    </main>
  );
}

/** Ingest secrets: created (shown once) and revoked. */
function Secrets({ applicationId }: { applicationId: string }) {
  const path = { path: { applicationId } };
  const list = useLoad(() => unwrap(api.GET('/v3/rest/agent-applications/{applicationId}/credentials', { params: path })), [applicationId]);
  const [created, setCreated] = useState<Schemas['NewCredential'] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const create = async () => {
    setError(null);
    try {
      setCreated(await unwrap(api.POST('/v3/rest/agent-applications/{applicationId}/credentials', { params: path })));
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  const revoke = async (c: Schemas['Credential']) => {
    const ok = await ask({
      title: `Revoke ${c.displayPrefix}…?`,
      body: <p>Agents sending this secret are refused from now on. Stored conversations stay.</p>,
      action: 'Revoke secret',
    });
    if (!ok) return;
    try {
      await unwrap(
        api.DELETE('/v3/rest/agent-applications/{applicationId}/credentials/{credentialId}', {
          params: { path: { applicationId, credentialId: c.credentialId } },
        }),
      );
      list.reload();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="secrets-title">
      <h2 id="secrets-title">Ingest secrets</h2>
      <p class="help">
        Agents send a secret as <code>X-Service-Agent-Key</code>. Create a new one before revoking the old to rotate without a gap.
      </p>
      {created && <ShownOnce label="New ingest secret" secret={created.secret} onDone={() => setCreated(null)} />}
      <ErrorNote error={list.error ?? error} />
      {list.data && list.data.credentials.length === 0 && (
        <p>No secrets yet: the agent cannot send its conversations until you create one and give it to the agent.</p>
      )}
      {list.data && list.data.credentials.length > 0 && (
        <table>
          <caption class="visually-hidden">Ingest secrets</caption>
          <thead>
            <tr>
              <th scope="col">Secret</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.data.credentials.map((c) => (
              <tr key={c.credentialId}>
                <td>
                  <code>{c.displayPrefix}…</code>
                </td>
                <td>
                  <Time at={c.createdAt} />
                </td>
                <td>
                  <Time at={c.lastUsedAt} />
                </td>
                <td>
                  {c.revokedAt ? (
                    <>
                      revoked <Time at={c.revokedAt} />
                    </>
                  ) : (
                    <button type="button" onClick={() => void revoke(c)} aria-label={`Revoke ${c.displayPrefix}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" onClick={() => void create()}>
        Create ingest secret
      </button>
      {dialog}
    </section>
  );
}

/** Deleting the application: its sessions kept or deleted, said before it happens. */
function DeleteApplication({ application }: { application: Application }) {
  const { route } = useLocation();
  const [sessions, setSessions] = useState<'keep' | 'delete'>('keep');
  const [error, setError] = useState<string | null>(null);
  const { ask, dialog } = useConfirm();
  const remove = async () => {
    const ok = await ask({
      title: `Delete ${application.name}?`,
      body: (
        <ul>
          <li>Its settings and ingest secrets are deleted; agents sending its secrets are refused.</li>
          <li>
            {sessions === 'delete'
              ? 'Its sessions, their events, participants and signals are permanently deleted.'
              : 'Its sessions and their signals are kept.'}
          </li>
        </ul>
      ),
      action: 'Delete application',
    });
    if (!ok) return;
    try {
      await unwrap(
        api.DELETE('/v3/rest/agent-applications/{applicationId}', {
          params: { path: { applicationId: application.applicationId }, query: { sessions } },
        }),
      );
      route('/console/applications');
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="delete-title" class="danger-zone">
      <h2 id="delete-title">Delete the application</h2>
      <fieldset>
        <legend>Its sessions</legend>
        <label class="inline">
          <input type="radio" name="sessions" checked={sessions === 'keep'} onChange={() => setSessions('keep')} /> Keep them
        </label>
        <label class="inline">
          <input type="radio" name="sessions" checked={sessions === 'delete'} onChange={() => setSessions('delete')} /> Delete them
        </label>
      </fieldset>
      <ErrorNote error={error} />
      <button type="button" class="danger" onClick={() => void remove()}>
        Delete application
      </button>
      {dialog}
    </section>
  );
}
