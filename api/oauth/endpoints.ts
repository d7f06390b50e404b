import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { rateLimitAddressKey } from '../../src/domain/client-address.js';
import type { RateLimiter } from '../../src/rate-limit.js';
import type { EndpointLimits } from '../../src/oauth/server.js';
import { errorPage, PAGE_HEADERS } from './pages.js';

/** The provider's own endpoints; `/oauth/interaction/*` are the API's pages, `/.well-known/oauth-protected-resource` its metadata. */
const PROVIDER_PATHS = /^\/(?:oauth\/(?!interaction(?:\/|$))|\.well-known\/(?:oauth-authorization-server|openid-configuration)(?:\/|$))/;

/**
 * Counts a request under the client's address (ctx.ip: the one the outermost trusted proxy saw; an
 * IPv6 client's /64); past the limit answers 429 with Retry-After itself and returns false.
 */
async function admitted(ctx: Context, limiter: RateLimiter | null, refuse: (ctx: Context, retryAfter: number) => void): Promise<boolean> {
  if (!limiter) return true;
  const decision = await limiter.consume(rateLimitAddressKey(ctx.ip));
  if (decision.allowed) return true;
  ctx.status = 429;
  ctx.set('Retry-After', String(decision.resetSeconds));
  refuse(ctx, decision.resetSeconds);
  return false;
}

/** Registration speaks JSON (RFC 7591's error shape). */
const refuseRegistration = (ctx: Context, retryAfter: number) => {
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: 'rate_limited', error_description: `Too many client registrations from this address; retry in ${retryAfter} s.` };
};

/** Authorization is a page in the user's browser. */
const refuseAuthorization = (ctx: Context, retryAfter: number) => {
  ctx.set(PAGE_HEADERS);
  ctx.type = 'html';
  ctx.body = errorPage('Too many requests', `Too many sign-in requests from this address. Try again in ${retryAfter} seconds.`);
};

/**
 * Hands the authorization server's requests to oidc-provider (which reads the bodies itself: no
 * body parser runs before it); the rest goes on to the API's routes. Registration and
 * authorization requests, anonymous by design, are limited per client address first.
 */
export function oauthEndpoints(provider: Provider, limits: EndpointLimits): Middleware {
  const callback = provider.callback();
  return async (ctx, next) => {
    if (!PROVIDER_PATHS.test(ctx.path)) {
      await next();
      return;
    }
    if (ctx.path === '/oauth/register' && ctx.method === 'POST' && !(await admitted(ctx, limits.registration, refuseRegistration))) return;
    if (ctx.path === '/oauth/authorize' && !(await admitted(ctx, limits.authorization, refuseAuthorization))) return;
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };
}
