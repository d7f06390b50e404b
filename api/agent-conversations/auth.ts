import type { Next } from 'koa';
import { hashSecret } from '../../src/auth/secrets.js';
import { touchCredential, type CredentialLookup } from '../../src/db/repositories/agent-applications.js';
import { CredentialCache } from '../../src/agents/credential-cache.js';
import { AppError, ForbiddenError, NotFoundError, UnauthenticatedError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';

const HEADER = 'x-service-agent-key';

/**
 * Spec: the agent ingest secret travels in X-Service-Agent-Key. Missing, unknown or revoked is
 * 401, decided before anything else (also before the body is read).
 */
export function agentSecret(deps: AppDeps) {
  const credentials = new CredentialCache(deps.config.agents.credentialCacheSeconds);
  return async (ctx: AppContext, next: Next) => {
    const secret = ctx.get(HEADER).trim();
    if (!secret) throw new UnauthenticatedError('unauthenticated', 'Authentication required: send the ingest secret in X-Service-Agent-Key.');
    const found = secret.length > 200 ? null : await credentials.lookup(deps.pool, hashSecret(secret));
    if (!found) throw new UnauthenticatedError('invalid_credentials', 'The ingest secret is not valid.');
    if (found.revoked_at) throw new UnauthenticatedError('credential_revoked', 'The ingest secret has been revoked.');
    if (!found.last_used_at || Date.parse(found.last_used_at) < Date.now() - 60_000) {
      await touchCredential(deps.pool, found.credential_id);
      found.last_used_at = new Date().toISOString(); // the cached lookup too: one touch a minute
    }
    ctx.state.agent = found;
    await next();
  };
}

/**
 * After the body is parsed: the body's agentKey must be the secret's application (401 otherwise,
 * still before any 404), then the application must exist and agent chats be enabled for the
 * organization (404), then the application must be active (403). A body without a usable
 * agentKey goes on to validation (400).
 */
export function agentApplication() {
  return async (ctx: AppContext, next: Next) => {
    const found = agentOf(ctx);
    const agentKey = (ctx.request.body as { agentKey?: unknown } | undefined)?.agentKey;
    if (typeof agentKey === 'string' && agentKey !== found.application.agent_key) {
      throw new UnauthenticatedError('invalid_credentials', 'The ingest secret does not belong to the application named by agentKey.');
    }
    if (found.application.deleted_at) throw new NotFoundError('Agent application');
    if (!found.agent_chats_enabled) throw new AppError(404, 'agent_chats_not_enabled', 'Agent chats are not enabled for this workspace.');
    if (found.application.status !== 'active') {
      throw new ForbiddenError('application_disabled', 'The application is disabled; it accepts no uploads until it is enabled again.');
    }
    await next();
  };
}

export function agentOf(ctx: AppContext): CredentialLookup {
  if (!ctx.state.agent) throw new Error('route used agentOf without agentSecret');
  return ctx.state.agent;
}
