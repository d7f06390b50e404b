import { endUserSessions, listUserGrants, revokeUserGrants } from '../../db/repositories/oauth-models.js';
import { presentGrant } from '../../contracts/grants.js';
import { flags, optStr, str } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { requireUser } from './tenancy.js';

/** `grant list --user U`: the MCP clients the user has approved, with their scopes. */
export async function grantList(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string' });
  const user = await requireUser(ctx, str(f, 'user'));
  const grants = await listUserGrants(await ctx.db(), user.id);
  return {
    userId: user.id,
    grants: grants.map(presentGrant),
  };
}

/**
 * `grant revoke --user U (--grant G | --all)`: the client's access and refresh tokens stop working
 * at once, and its next authorization asks the user again. `--all` also ends the user's sign-in
 * sessions at the authorization server, so that nobody holding the browser's session cookie
 * approves a client without signing in again.
 */
export async function grantRevoke(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string', grant: 'string', all: 'boolean' });
  const user = await requireUser(ctx, str(f, 'user'));
  const grantId = optStr(f, 'grant');
  if ((grantId === undefined) === (f.all !== true)) throw new CliError('give either --grant G or --all', 2);
  const { revoked, endedSessions } = await (
    await ctx.db()
  ).transaction(async (tx) => ({
    revoked: await revokeUserGrants(tx, user.id, grantId),
    endedSessions: grantId === undefined ? await endUserSessions(tx, user.id) : 0,
  }));
  if (grantId !== undefined && revoked.length === 0) throw new CliError(`grant ${grantId} of user ${user.id} not found`);
  return { userId: user.id, revokedGrantIds: revoked, ...(grantId === undefined ? { endedSessions } : {}) };
}
