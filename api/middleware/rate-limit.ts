import type { Next } from 'koa';
import { AppError } from '../../src/errors.js';
import type { RateLimiter } from '../../src/rate-limit.js';
import type { AppContext } from '../context.js';
import { principalOf } from './auth.js';

/**
 * Counts every authenticated request of an area per API key (or user), valid or not, and answers
 * with RateLimit-Limit / -Remaining / -Reset on every response and 429 with Retry-After past the limit.
 */
export function rateLimit(limiter: RateLimiter) {
  return async (ctx: AppContext, next: Next) => {
    const principal = principalOf(ctx);
    const key = principal.kind === 'apiKey' ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
    const decision = await limiter.consume(key);
    ctx.set({
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    });
    if (!decision.allowed) {
      throw new AppError(429, 'rate_limited', `Rate limit of ${decision.limit} requests a minute exceeded; retry in ${decision.resetSeconds} s.`, {
        retryAfterSeconds: decision.resetSeconds,
      }, { 'Retry-After': String(decision.resetSeconds) });
    }
    await next();
  };
}
