import { createApiKey } from '../../auth/credentials.js';
import { isScope, type Scope } from '../../auth/scopes.js';
import { revokeApiKey } from '../../db/repositories/api-keys.js';
import { findUser } from '../../db/repositories/users.js';
import { flags, int, list, optStr, str } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { requireOrganization } from './tenancy.js';

export async function apiKeyCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', scopes: 'string', name: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const scopes = list(f, 'scopes');
  const unknown = (scopes ?? []).filter((s) => !isScope(s));
  if (unknown.length) throw new CliError(`unknown scope(s): ${unknown.join(', ')}`, 2);
  if (scopes && scopes.length === 0) throw new CliError('--scopes must name at least one scope', 2);
  const { row, apiKey } = await createApiKey(await ctx.db(), { organizationId: org.id, scopes: scopes as Scope[] | undefined, name: optStr(f, 'name') });
  return { apiKeyId: row.id, apiKey, scopes: row.scopes };
}

export async function apiKeyRevoke(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { id: 'string' });
  const row = await revokeApiKey(await ctx.db(), str(f, 'id'));
  if (!row) throw new CliError(`API key ${str(f, 'id')} not found`);
  return { apiKeyId: row.id, revokedAt: row.revoked_at };
}

export async function tokenIssue(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string', 'ttl-seconds': 'string' });
  const user = await findUser(await ctx.db(), str(f, 'user'));
  if (!user) throw new CliError(`user ${str(f, 'user')} not found`);
  if (user.status !== 'active') throw new CliError(`user ${user.id} is disabled`);
  const ttl = int(f, 'ttl-seconds', { min: 1, max: 31 * 24 * 3600, fallback: ctx.config.auth.accessTokenTtlSeconds });
  return (await ctx.tokens()).issue({ id: user.id, organizationId: user.organization_id }, ttl);
}
