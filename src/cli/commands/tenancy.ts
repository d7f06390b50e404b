import { UniqueIntegrityConstraintViolationError } from 'slonik';
import {
  createOrganization,
  findOrganization,
  listOrganizations,
  organizationCounts,
  updateOrganizationFlags,
  type OrganizationRow,
} from '../../db/repositories/organizations.js';
import { createUser, findUser, findUserByEmail, listUsers, type UserRow } from '../../db/repositories/users.js';
import { endUserSessions, revokeUserGrants } from '../../db/repositories/oauth-models.js';
import { PasswordRejectedError, setPassword } from '../../auth/sign-in.js';
import { readPasswordFromStdin } from '../password-input.js';
import { flags, int, optStr, paging, PAGING_FLAGS, str } from '../args.js';
import { pageBody, pageWindow } from '../../../api/paging.js';
import { CliError, type CliContext } from '../context.js';
import { topUpCredits } from '../../agents/billing.js';
import { presentUser } from '../../../api/management/schemas.js';

// The same addresses as `x@y.z` with y and z any non-empty text, written so that no two quantifiers
// can take the same characters (linear time).
const EMAIL = /^[^\s@]+@[^\s@][^\s@.]*\.[^\s@]+$/;

export async function requireOrganization(ctx: CliContext, id: string) {
  const org = await findOrganization(await ctx.db(), id);
  if (!org) throw new CliError(`organization ${id} not found`);
  return org;
}

/** The user with this id, or the CLI's "not found" error. */
export async function requireUser(ctx: CliContext, id: string) {
  const user = await findUser(await ctx.db(), id);
  if (!user) throw new CliError(`user ${id} not found`);
  return user;
}

export async function orgCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { name: 'string', credits: 'string', 'no-recording': 'boolean' });
  const name = str(f, 'name');
  if (name.length > 200) throw new CliError('--name must be at most 200 characters', 2);
  const credits = int(f, 'credits', { min: 0, max: 1_000_000_000, fallback: 0 });
  const org = await (
    await ctx.db()
  ).transaction((tx) => createOrganization(tx, { name, credits, recordingAllowed: f['no-recording'] !== true }));
  return { organizationId: org.id, name: org.name };
}

export async function userCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, {
    org: 'string',
    email: 'string',
    'first-name': 'string',
    'last-name': 'string',
    role: 'string',
    'password-stdin': 'boolean',
  });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const email = str(f, 'email');
  if (!EMAIL.test(email)) throw new CliError('--email must be an e-mail address', 2);
  const role = optStr(f, 'role') ?? 'member';
  if (role !== 'member' && role !== 'admin') throw new CliError('--role must be member or admin', 2);
  const password = f['password-stdin'] === true ? await readPasswordFromStdin() : undefined;
  try {
    const user = await (
      await ctx.db()
    ).transaction(async (tx) => {
      const created = await createUser(tx, {
        organizationId: org.id,
        email,
        firstName: optStr(f, 'first-name'),
        lastName: optStr(f, 'last-name'),
        role,
      });
      if (password !== undefined) await setPassword(tx, created.id, password);
      return created;
    });
    return { userId: user.id, email: user.email, ...(password !== undefined ? { signIn: 'password' } : {}) };
  } catch (error) {
    throw userError(error, email);
  }
}

/**
 * `user set-password (--user U | --org O --email E) --password-stdin`: sets or replaces the user's
 * sign-in password (the MCP authorization server's login form). What the old password opened ends
 * with it: the authorization server's sign-in sessions, and the grants with every code, access and
 * refresh token issued under them (as `grant revoke --all`), so that whoever knew the old one keeps
 * nothing. The CLI's own access tokens are not obtained with a password and stay.
 */
export async function userSetPassword(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string', org: 'string', email: 'string', 'password-stdin': 'boolean' });
  if (f['password-stdin'] !== true)
    throw new CliError('--password-stdin is required: the password is read from standard input, never from an argument', 2);
  const db = await ctx.db();
  const byId = optStr(f, 'user');
  if (!byId && !(optStr(f, 'org') && optStr(f, 'email'))) throw new CliError('--user, or --org and --email, is required', 2);
  const user = byId
    ? await findUser(db, byId)
    : await findUserByEmail(db, (await requireOrganization(ctx, str(f, 'org'))).id, str(f, 'email'));
  if (!user) throw new CliError(`user ${byId ?? str(f, 'email')} not found`);
  const password = await readPasswordFromStdin();
  try {
    const ended = await db.transaction(async (tx) => {
      await setPassword(tx, user.id, password);
      return { revokedGrantIds: await revokeUserGrants(tx, user.id), endedSessions: await endUserSessions(tx, user.id) };
    });
    return { userId: user.id, email: user.email, signIn: 'password', ...ended };
  } catch (error) {
    throw userError(error, user.email);
  }
}

function userError(error: unknown, email: string): unknown {
  if (error instanceof PasswordRejectedError) return new CliError(error.message, 2);
  if (error instanceof UniqueIntegrityConstraintViolationError) {
    return new CliError(
      error.constraint === 'users_sign_in_email_key'
        ? `${email} already signs in with a password to a user of another organization: an e-mail address signs in to one account`
        : `a user with e-mail ${email} already exists in this organization`,
    );
  }
  return error;
}

export async function creditsAdd(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', amount: 'string', reason: 'string' });
  const amount = int(f, 'amount', { min: 1, max: 1_000_000_000 });
  const result = await topUpCredits(await ctx.db(), { organizationId: str(f, 'org'), amount, reason: optStr(f, 'reason') ?? 'cli' }, (id) =>
    ctx.resumeBlockedSessions(id),
  );
  if (!result) throw new CliError(`organization ${str(f, 'org')} not found`);
  return result;
}

function onOff(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new CliError(`--${name} must be on or off`, 2);
  return value === 'on';
}

export async function orgUpdate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', 'agent-chats': 'string', recording: 'string' });
  const agentChatsEnabled = onOff(optStr(f, 'agent-chats'), 'agent-chats');
  const recordingAllowed = onOff(optStr(f, 'recording'), 'recording');
  if (agentChatsEnabled === undefined && recordingAllowed === undefined)
    throw new CliError('nothing to update: give --agent-chats or --recording', 2);
  const org = await updateOrganizationFlags(await ctx.db(), str(f, 'org'), { agentChatsEnabled, recordingAllowed });
  if (!org) throw new CliError(`organization ${str(f, 'org')} not found`);
  return { organizationId: org.id, name: org.name, agentChatsEnabled: org.agent_chats_enabled, recordingAllowed: org.recording_allowed };
}

/** An organization as the CLI shows it: what `GET /v3/rest/organization` shows, and its agent chats switch. */
const presentOrg = (org: OrganizationRow) => ({
  organizationId: org.id,
  name: org.name,
  recordingAllowed: org.recording_allowed,
  agentChatsEnabled: org.agent_chats_enabled,
  creditBalance: org.credit_balance,
  createdAt: org.created_at,
});

/** A user as `GET /v3/rest/users/{id}` shows it, with the organization (the CLI sees every one). */
const presentCliUser = (user: UserRow) => ({ ...presentUser(user), organizationId: user.organization_id });

/** `org list [--page N] [--limit L]`: every organization, oldest first. */
export async function orgList(ctx: CliContext, argv: string[]) {
  const p = paging(flags(argv, PAGING_FLAGS));
  return pageBody('organizations', await listOrganizations(await ctx.db(), pageWindow(p)), p, presentOrg);
}

/** `org show --org O`: the organization and what it holds, counted. */
export async function orgShow(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const c = await organizationCounts(await ctx.db(), org.id);
  return {
    ...presentOrg(org),
    counts: {
      users: c.users,
      activeApiKeys: c.active_api_keys,
      agentApplications: c.agent_applications,
      webhookEndpoints: c.webhook_endpoints,
      feedbackSources: c.feedback_sources,
      people: c.people,
      recordings: c.recordings,
      agentSessions: c.agent_sessions,
    },
  };
}

/** `user list [--org O] [--email E] [--page N] [--limit L]`: an organization's users, or who has an address (any case, every organization). */
export async function userList(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', email: 'string', ...PAGING_FLAGS });
  const p = paging(f);
  const orgId = optStr(f, 'org');
  const organizationId = orgId === undefined ? undefined : (await requireOrganization(ctx, orgId)).id;
  const rows = await listUsers(await ctx.db(), { organizationId, email: optStr(f, 'email') }, pageWindow(p));
  return pageBody('users', rows, p, presentCliUser);
}

/** `user show --user U`. */
export async function userShow(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string' });
  return presentCliUser(await requireUser(ctx, str(f, 'user')));
}
