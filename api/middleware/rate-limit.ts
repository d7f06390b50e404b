import type { Next } from 'koa';
import { AppError } from '../../src/errors.js';
import type { RateDecision, RateLimiter } from '../../src/rate-limit.js';
import type { AppContext, AppDeps } from '../context.js';
import { ERROR_REF } from '../openapi.js';
import type { RouteSpec } from '../routes.js';
import { principalOf } from './auth.js';

/** Per API key (or user): the feedback area and MCP. */
export const perCredential = (ctx: AppContext): string => {
  const principal = principalOf(ctx);
  return principal.kind === 'apiKey' ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
};

/** Per organization, whatever the credential: so that one tenant cannot starve the others. */
export const perOrganization = (ctx: AppContext): string => `org:${principalOf(ctx).organizationId}`;

/**
 * Counts every authenticated request of a route, valid or not, under the key `keyOf` gives, and
 * answers with RateLimit-Limit / -Remaining / -Reset on every response and 429 with Retry-After past the limit.
 */
export function rateLimit(limiter: RateLimiter, keyOf: (ctx: AppContext) => string = perCredential) {
  return async (ctx: AppContext, next: Next) => {
    const decision = await limiter.consume(keyOf(ctx));
    ctx.set(rateHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision);
    await next();
  };
}

/** The RateLimit-Limit / -Remaining / -Reset headers of a decision. */
export function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

/** The 429 of a refused decision: its RateLimit headers and Retry-After; `what` the limit counts. */
export function rateLimited(decision: RateDecision, what = 'requests a minute'): AppError {
  return new AppError('rate_limited', {
    message: `Rate limit of ${decision.limit} ${what} exceeded; retry in ${decision.resetSeconds} s.`,
    details: { retryAfterSeconds: decision.resetSeconds },
    headers: { ...rateHeaders(decision), 'Retry-After': String(decision.resetSeconds) },
  });
}

export const RATE_HEADERS = {
  'RateLimit-Limit': 'Requests allowed a minute',
  'RateLimit-Remaining': 'Requests left in the window',
  'RateLimit-Reset': 'Seconds until the window resets',
};

/** A limited route's responses in the OpenAPI document: the headers on each, and the 429. */
export function withRateLimit(responses: RouteSpec['responses'], over: string): RouteSpec['responses'] {
  for (const r of Object.values(responses)) r.headers = { ...RATE_HEADERS, ...r.headers };
  return { ...responses, 429: { description: `${over}; see Retry-After`, schema: ERROR_REF, headers: RATE_HEADERS } };
}

/**
 * A per-organization limit shared by a group of routes (one count across them, every replica): the
 * middleware to put on each, and its responses with the headers and the 429 documented.
 */
export function organizationRateLimit(deps: AppDeps, name: string, perMinute: number, over: string) {
  const limiter = deps.rateLimits.limiter(name, perMinute);
  return {
    middleware: limiter ? [rateLimit(limiter, perOrganization)] : [],
    responses: (responses: RouteSpec['responses']) => withRateLimit(responses, over),
  };
}

/** API keys, webhook endpoints with their deliveries, the organization export (issue 50): MANAGEMENT_RATE_LIMIT_PER_MINUTE. */
export const managementRateLimit = (deps: AppDeps) =>
  organizationRateLimit(
    deps,
    'management',
    deps.config.rateLimits.managementPerMinute,
    'Over MANAGEMENT_RATE_LIMIT_PER_MINUTE requests a minute for this organization',
  );
