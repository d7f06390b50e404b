import { decodeJwt } from 'jose';
import { issueApiKey, organizationApiKeys } from '../../auth/api-keys.js';
import { isScope, type Scope } from '../../auth/scopes.js';
import { revokeApiKey } from '../../db/repositories/api-keys.js';
import { endUserSessions, revokeUserGrants } from '../../db/repositories/oauth-models.js';
import { revokeToken, revokeUserTokens } from '../../db/repositories/users.js';
import { isUuid } from '../../db/uuid.js';
import { flags, int, list, optStr, paging, PAGING_FLAGS, str } from '../args.js';
import { pageBody, pageWindow } from '../../../api/paging.js';
import { CliError, type CliContext } from '../context.js';
import { requireOrganization, requireUser } from './tenancy.js';

export async function apiKeyCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', scopes: 'string', name: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const scopes = list(f, 'scopes');
  const unknown = (scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length) throw new CliError(`unknown scope(s): ${unknown.join(', ')}`, 2);
  if (scopes && scopes.length === 0) throw new CliError('--scopes must name at least one scope', 2);
  // An operator: any scopes; without --scopes, every data scope (never admin or webhooks:manage).
  return issueApiKey(await ctx.db(), null, { organizationId: org.id, scopes: scopes as Scope[] | undefined, name: optStr(f, 'name') });
}

/** `api-key list --org O [--page N] [--limit L]`: the organization's keys, revoked ones too, oldest first (never the keys). */
export async function apiKeyList(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', ...PAGING_FLAGS });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const p = paging(f);
  return pageBody('apiKeys', await organizationApiKeys(await ctx.db(), org.id, pageWindow(p)), p, (k) => k);
}

export async function apiKeyRevoke(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { id: 'string' });
  const row = await revokeApiKey(await ctx.db(), str(f, 'id'));
  if (!row) throw new CliError(`API key ${str(f, 'id')} not found`);
  return { apiKeyId: row.id, revokedAt: row.revoked_at };
}

/** The longest lifetime `token issue` gives a token. */
const MAX_TOKEN_TTL_SECONDS = 31 * 24 * 3600;

export async function tokenIssue(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string', 'ttl-seconds': 'string' });
  const user = await requireUser(ctx, str(f, 'user'));
  if (user.status !== 'active') throw new CliError(`user ${user.id} is disabled`);
  const ttl = int(f, 'ttl-seconds', { min: 1, max: MAX_TOKEN_TTL_SECONDS, fallback: ctx.config.auth.accessTokenTtlSeconds });
  return (await ctx.tokens()).issue({ id: user.id, organizationId: user.organization_id, tokenVersion: user.token_version }, ttl);
}

function beforeExpiry(token: string): Date {
  try {
    const { exp } = decodeJwt(token);
    if (typeof exp === 'number' && exp * 1000 <= Date.now()) return new Date(exp * 1000 - 1000);
  } catch {
    // not a JWT: verification says so
  }
  return new Date();
}

/**
 * `--token T` (the token, or the tokenId `token issue` printed): that token stops working (its jti is kept until it expires). `--user U`: every
 * token the user holds stops working; tokens issued afterwards work.
 */
export async function tokenRevoke(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { token: 'string', user: 'string' });
  const token = optStr(f, 'token');
  const userId = optStr(f, 'user');
  if ((token === undefined) === (userId === undefined)) throw new CliError('give either --token T or --user U', 2);
  if (userId !== undefined) {
    // Every token: the CLI's access tokens, what MCP clients were given through OAuth grants, and
    // the authorization server's sign-in sessions (a session cookie would approve a client again).
    const revoked = await (
      await ctx.db()
    ).transaction(async (tx) => {
      const user = await revokeUserTokens(tx, userId);
      return user ? { user, grantIds: await revokeUserGrants(tx, user.id), endedSessions: await endUserSessions(tx, user.id) } : null;
    });
    if (!revoked) throw new CliError(`user ${userId} not found`);
    return { userId: revoked.user.id, revoked: 'all', revokedGrantIds: revoked.grantIds, endedSessions: revoked.endedSessions };
  }
  // The tokenId `token issue` prints: enough to revoke it (the token itself is not stored anywhere).
  if (isUuid(token)) {
    const expiresAt = new Date(Date.now() + MAX_TOKEN_TTL_SECONDS * 1000);
    await revokeToken(await ctx.db(), { tokenId: token.toLowerCase(), userId: null, expiresAt });
    return { tokenId: token.toLowerCase(), revoked: 'token' };
  }
  // An expired token needs no revocation, but saying so is clearer than "invalid": read it as of just before it expired.
  const verified = await (await ctx.tokens()).verify(token ?? '', beforeExpiry(token ?? ''));
  if (typeof verified === 'string' || !verified.tokenId) throw new CliError('--token is not an access token this service issued');
  if (verified.expiresAt.getTime() <= Date.now()) return { tokenId: verified.tokenId, userId: verified.userId, revoked: 'already expired' };
  const user = await requireUser(ctx, verified.userId);
  await revokeToken(await ctx.db(), { tokenId: verified.tokenId, userId: user.id, expiresAt: verified.expiresAt });
  return { tokenId: verified.tokenId, userId: user.id, revoked: 'token', expiresAt: verified.expiresAt.toISOString() };
}
