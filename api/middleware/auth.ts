import type { Next } from 'koa';
import { authenticateApiKey, authenticateOAuthToken, authenticateToken, type AuthFailure } from '../../src/auth/credentials.js';
import type { Principal, PrincipalKind } from '../../src/auth/principal.js';
import type { Scope } from '../../src/auth/scopes.js';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../../src/errors.js';
import { publicBaseUrl } from '../base-url.js';
import type { AppContext, AppDeps } from '../context.js';

export interface AuthRequirement {
  /** Credentials the route accepts. */
  accept: PrincipalKind[];
  /** Credentials that authenticate but may not use the route: 403 (spec: an API key on meeting-joins). */
  forbid?: PrincipalKind[];
  /** Scope the principal needs: 403 `insufficient_scope` without it. */
  scope?: Scope;
  /** A valid user token whose user cannot be found: 404 `user_not_found` (spec: meeting joins) instead of 401. */
  unknownUserNotFound?: boolean;
}

const CREDENTIAL_NAMES: Record<PrincipalKind, string> = {
  apiKey: 'an organization API key (X-Service-Api-Key)',
  user: 'a user access token (Authorization: Bearer)',
};

function presented(ctx: AppContext): { kind: PrincipalKind; secret: string } | null {
  const apiKey = ctx.get('x-service-api-key');
  if (apiKey) return { kind: 'apiKey', secret: apiKey.trim() };
  const authorization = ctx.get('authorization');
  if (!authorization) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw new UnauthenticatedError('invalid_credentials', 'The Authorization header must be "Bearer <access token>".');
  return { kind: 'user', secret: match[1] };
}

function failure(kind: PrincipalKind, reason: AuthFailure): UnauthenticatedError {
  const what = kind === 'apiKey' ? 'API key' : 'access token';
  if (reason === 'revoked') return new UnauthenticatedError('credential_revoked', `The ${what} has been revoked.`);
  if (reason === 'expired') return new UnauthenticatedError('token_expired', `The ${what} has expired.`);
  return new UnauthenticatedError('invalid_credentials', `The ${what} is not valid.`);
}

/** A user's bearer token is the CLI's (a JWT) or the console's (an opaque OAuth access token for the REST API). */
async function verify(deps: AppDeps, ctx: AppContext, kind: PrincipalKind, secret: string): Promise<Principal | AuthFailure> {
  if (kind === 'apiKey') return authenticateApiKey(deps.pool, secret);
  if (deps.oauth?.isAccessToken(secret)) {
    const result = await authenticateOAuthToken(deps.pool, await deps.oauth.forBase(publicBaseUrl(deps, ctx)), secret, 'rest');
    return typeof result === 'string' ? result : result.principal;
  }
  return authenticateToken(deps.pool, deps.tokens, secret);
}

/** 401 for missing, invalid, expired or revoked credentials; 403 for a forbidden kind or a missing scope. */
export function authenticate(deps: AppDeps, requirement: AuthRequirement) {
  const forbid = requirement.forbid ?? [];
  const expected = requirement.accept.map((k) => CREDENTIAL_NAMES[k]).join(' or ');
  return async (ctx: AppContext, next: Next) => {
    const credential = presented(ctx);
    if (!credential || (!requirement.accept.includes(credential.kind) && !forbid.includes(credential.kind))) {
      throw new UnauthenticatedError('unauthenticated', `Authentication required: send ${expected}.`);
    }
    const principal = await verify(deps, ctx, credential.kind, credential.secret);
    if (principal === 'unknown_user' && requirement.unknownUserNotFound) throw new NotFoundError('User');
    if (typeof principal === 'string') throw failure(credential.kind, principal);
    ctx.state.principal = principal;
    if (forbid.includes(principal.kind)) {
      throw new ForbiddenError('principal_not_allowed', `This operation requires ${expected}.`);
    }
    if (requirement.scope && !principal.scopes.includes(requirement.scope)) {
      throw new ForbiddenError('insufficient_scope', `The credential lacks the '${requirement.scope}' scope.`, {
        requiredScope: requirement.scope,
      });
    }
    await next();
  };
}

export function principalOf(ctx: AppContext): Principal {
  if (!ctx.state.principal) throw new Error('route used principalOf without authentication');
  return ctx.state.principal;
}
