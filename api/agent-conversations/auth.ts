import type { Middleware, Next } from 'koa';
import { hashSecret } from '../../src/auth/secrets.js';
import { touchCredential, type CredentialLookup } from '../../src/db/repositories/agent-applications.js';
import { CredentialCache, ingestRefusal } from '../../src/agents/credential-cache.js';
import { AppError, ForbiddenError, NotFoundError, UnauthenticatedError, type ErrorKey } from '../../src/errors.js';
import { AgentIngestWriter, INGEST_BATCHING, StaleAuthorityError } from '../../src/agents/ingest.js';
import type { AppContext, AppDeps } from '../context.js';
import { rateLimit } from '../middleware/rate-limit.js';

const HEADER = 'x-service-agent-key';

/**
 * What REST and OTLP ingest share in a process: one credential cache (a secret looked up once for
 * both), one writer (their requests batched together, one queue per session) and one rate limit per
 * organization (AGENT_INGEST_RATE_LIMIT_PER_MINUTE, for both together).
 */
export interface AgentIngestPath {
  credentials: CredentialCache;
  writer: AgentIngestWriter;
  /** The rate limit's middleware, after agentSecret; none when rate limits are off. */
  limits: Middleware<AppContext['state']>[];
}

export function agentIngestPath(deps: AppDeps): AgentIngestPath {
  // Leased: ingest is too busy for a database round trip per request.
  const limiter = deps.rateLimits.limiter('agent-ingest', deps.config.rateLimits.agentIngestPerMinute, { lease: 50 });
  return {
    credentials: new CredentialCache(deps.config.agents.credentialCacheSeconds),
    writer: new AgentIngestWriter(deps.pool, { analysisCreditCost: deps.config.agents.analysisCreditCost, ...INGEST_BATCHING }),
    limits: limiter ? [rateLimit(limiter, (ctx) => `org:${agentOf(ctx).application.organization_id}`)] : [],
  };
}

/** What agentSecret and agentApplication answer with: every route they guard lists these. */
export const AGENT_SECRET_ERRORS = [
  'unauthenticated',
  'invalid_credentials',
  'credential_revoked',
  'application_disabled',
  'not_found',
  'agent_chats_not_enabled',
] as const satisfies readonly ErrorKey[];

/**
 * Spec: the agent ingest secret travels in X-Service-Agent-Key. Missing, unknown or revoked is
 * 401, decided before anything else (also before the body is read). `credentials` is the route's
 * cache: the handler asks it again when the ingest found the lookup out of date.
 */
export function agentSecret(deps: AppDeps, credentials: CredentialCache) {
  return async (ctx: AppContext, next: Next) => {
    const secret = ctx.get(HEADER).trim();
    if (!secret)
      throw new UnauthenticatedError('unauthenticated', 'Authentication required: send the ingest secret in X-Service-Agent-Key.');
    const secretHash = secret.length > 200 ? null : hashSecret(secret);
    const found = secretHash ? await credentials.lookup(deps.pool, secretHash) : null;
    checkCredential(found);
    if (!found.last_used_at || Date.parse(found.last_used_at) < Date.now() - 60_000) {
      await touchCredential(deps.pool, found.credential_id);
      found.last_used_at = new Date().toISOString(); // the cached lookup too: one touch a minute
    }
    ctx.state.agent = found;
    ctx.state.agentSecretHash = secretHash!;
    await next();
  };
}

function checkCredential(found: CredentialLookup | null): asserts found is CredentialLookup {
  if (!found) throw new UnauthenticatedError('invalid_credentials', 'The ingest secret is not valid.');
  if (ingestRefusal(found) === 'credential_revoked')
    throw new UnauthenticatedError('credential_revoked', 'The ingest secret has been revoked.');
}

/**
 * After the body is parsed: the body's agentKey must be the secret's application (401 otherwise,
 * still before any 404), then the application must exist and agent chats be enabled for the
 * organization (404), then the application must be active (403). A body without a usable
 * agentKey goes on to validation (400).
 */
export function agentApplication() {
  return async (ctx: AppContext, next: Next) => {
    checkApplication(agentOf(ctx), (ctx.request.body as { agentKey?: unknown } | undefined)?.agentKey);
    await next();
  };
}

function checkApplication(found: CredentialLookup, agentKey: unknown): void {
  if (typeof agentKey === 'string' && agentKey !== found.application.agent_key) {
    throw new UnauthenticatedError('invalid_credentials', 'The ingest secret does not belong to the application named by agentKey.');
  }
  // A revoked secret was refused by checkCredential already.
  switch (ingestRefusal(found)) {
    case 'application_deleted':
      throw new NotFoundError('Agent application');
    case 'agent_chats_not_enabled':
      throw new AppError('agent_chats_not_enabled');
    case 'application_disabled':
      throw new ForbiddenError('application_disabled');
    default:
  }
}

/**
 * The request's credential and application looked up again, bypassing the cache, with every check
 * of agentSecret and agentApplication: for an ingest whose transaction found its lookup out of date.
 */
export async function refreshAgent(
  deps: AppDeps,
  credentials: CredentialCache,
  ctx: AppContext,
  agentKey: string,
): Promise<CredentialLookup> {
  const found = await credentials.lookup(deps.pool, ctx.state.agentSecretHash!, { fresh: true });
  checkCredential(found);
  checkApplication(found, agentKey);
  ctx.state.agent = found;
  return found;
}

export function agentOf(ctx: AppContext): CredentialLookup {
  if (!ctx.state.agent) throw new Error('route used agentOf without agentSecret');
  return ctx.state.agent;
}

/**
 * Runs a write prepared from the request's (cached) lookup; one that a change made out of date is run
 * again with a fresh lookup, its checks again too (revoked 401, disabled 403). Two changes within one
 * request are rare; a third stale lookup in a row is answered 503, with nothing stored.
 */
export async function withCurrentAuthority<T>(
  deps: AppDeps,
  credentials: CredentialCache,
  ctx: AppContext,
  agentKey: string,
  write: (authority: CredentialLookup) => Promise<T>,
): Promise<T> {
  let authority = agentOf(ctx);
  for (let attempt = 0; ; attempt++) {
    try {
      return await write(authority);
    } catch (error) {
      if (!(error instanceof StaleAuthorityError) || attempt === 2) throw error;
      authority = await refreshAgent(deps, credentials, ctx, agentKey);
    }
  }
}
