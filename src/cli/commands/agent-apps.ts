import {
  AGENT_SECRET_PREFIX,
  changeApplication,
  createApplication,
  issueCredential,
  presentApplication,
  presentCredential,
  type SettingsPatch,
} from '../../agents/applications.js';
import { findApplicationById, listApplications, listCredentials, revokeCredential } from '../../db/repositories/agent-applications.js';
import { isUuid } from '../../db/uuid.js';
import { flags, list, optStr, paging, PAGING_FLAGS, str, type Flags } from '../args.js';
import { pageBody, pageWindow } from '../../../api/paging.js';
import { CliError, type CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

const AGENT_KEY = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const ENVIRONMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

async function requireApplication(ctx: CliContext, id: string) {
  const app = await findApplicationById(await ctx.db(), id);
  if (!app) throw new CliError(`agent application ${id} not found`);
  return app;
}

export async function agentAppCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', name: 'string', 'agent-key': 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const agentKey = str(f, 'agent-key');
  if (!AGENT_KEY.test(agentKey))
    throw new CliError('--agent-key must be 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit', 2);
  const name = str(f, 'name');
  if (name.length > 200) throw new CliError('--name must be at most 200 characters', 2);
  const app = await createApplication(await ctx.db(), { organizationId: org.id, name, agentKey });
  return { applicationId: app.id, agentKey: app.agent_key };
}

function onOff(f: Flags, name: string): boolean | undefined {
  const v = optStr(f, name);
  if (v === undefined) return undefined;
  if (v !== 'on' && v !== 'off') throw new CliError(`--${name} must be on or off`, 2);
  return v === 'on';
}

function retention(f: Flags): number | null | undefined {
  const v = optStr(f, 'retention-days');
  if (v === undefined) return undefined;
  if (v === 'none') return null;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= 3650)) throw new CliError('--retention-days must be 1 to 3650 or none', 2);
  return n;
}

function environments(f: Flags): string[] | undefined {
  const v = optStr(f, 'environments');
  if (v === undefined) return undefined;
  if (v === 'any') return [];
  const envs = list(f, 'environments') ?? [];
  const bad = envs.filter((e) => !ENVIRONMENT.test(e));
  if (bad.length || envs.length > 50) throw new CliError(`--environments must be "any" or up to 50 names (bad: ${bad.join(', ')})`, 2);
  return envs;
}

function access(f: Flags): SettingsPatch['conversationAccess'] {
  const v = optStr(f, 'access');
  if (v === undefined) return undefined;
  if (v === 'workspace') return { type: 'workspace' };
  const users = v.startsWith('users:')
    ? v
        .slice('users:'.length)
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean)
    : [];
  if (users.length === 0 || !users.every(isUuid)) throw new CliError('--access must be workspace or users:<uuid>,<uuid>…', 2);
  return { type: 'users', userIds: users };
}

function status(f: Flags): 'active' | 'disabled' | undefined {
  const v = optStr(f, 'status');
  if (v !== undefined && v !== 'active' && v !== 'disabled') throw new CliError('--status must be active or disabled', 2);
  return v;
}

export async function agentAppUpdate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, {
    app: 'string',
    name: 'string',
    status: 'string',
    'content-capture': 'string',
    'redact-fields': 'string',
    'redact-patterns': 'string',
    'retention-days': 'string',
    environments: 'string',
    access: 'string',
  });
  const app = await requireApplication(ctx, str(f, 'app'));
  const patch: SettingsPatch = {
    name: optStr(f, 'name'),
    status: status(f),
    contentCapture: onOff(f, 'content-capture'),
    // An empty value clears the list: --redact-fields ""
    redactedFieldNames: typeof f['redact-fields'] === 'string' ? (list(f, 'redact-fields') ?? []) : undefined,
    redactedTextPatterns: typeof f['redact-patterns'] === 'string' ? (list(f, 'redact-patterns') ?? []) : undefined,
    retentionDays: retention(f),
    allowedEnvironments: environments(f),
    conversationAccess: access(f),
  };
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as SettingsPatch;
  if (Object.keys(defined).length === 0) throw new CliError('nothing to update: give at least one setting', 2);
  return presentApplication(await changeApplication(await ctx.db(), app.organization_id, app.id, defined));
}

export async function agentAppSecret(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { app: 'string' });
  const app = await requireApplication(ctx, str(f, 'app'));
  const { row, secret } = await issueCredential(await ctx.db(), app);
  return { credentialId: row.id, secret, applicationId: app.id, header: 'X-Service-Agent-Key', prefix: AGENT_SECRET_PREFIX };
}

export async function agentAppRevoke(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { credential: 'string' });
  const row = await revokeCredential(await ctx.db(), str(f, 'credential'), { organizationId: null });
  if (!row) throw new CliError(`agent credential ${str(f, 'credential')} not found`);
  return { credentialId: row.id, revokedAt: row.revoked_at };
}

/** `agent-app list --org O [--page N] [--limit L]`: the organization's agent applications, oldest first. */
export async function agentAppList(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', ...PAGING_FLAGS });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const p = paging(f);
  return pageBody('applications', await listApplications(await ctx.db(), org.id, pageWindow(p)), p, presentApplication);
}

/** `agent-app show --app A`: the application with its settings and its ingest credentials (never their secrets). */
export async function agentAppShow(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { app: 'string' });
  const app = await requireApplication(ctx, str(f, 'app'));
  return { ...presentApplication(app), credentials: (await listCredentials(await ctx.db(), app.id)).map(presentCredential) };
}
