import type { Middleware, Next } from 'koa';
import type { DatabasePool } from 'slonik';
import type { OAuthServer, OAuthServers } from '../../src/oauth/server.js';
import type { AppContext } from '../context.js';
import { oauthEndpoints } from './endpoints.js';
import { oauthInteractionRoutes } from './interactions.js';
import { grantsPageRoutes } from './grants-page.js';

/** Everything the authorization servers answer: their endpoints, metadata and pages. */
const OAUTH_PATHS = /^\/(?:oauth\/|\.well-known\/(?:oauth-authorization-server|openid-configuration)(?:\/|$))/;

type Handler = (ctx: AppContext, next: Next) => Promise<void>;

/**
 * The authorization server of the request's base URL (`base`: PUBLIC_BASE_URL, or the request's
 * own): its pages and oidc-provider's endpoints, mounted once per issuer.
 */
export function oauthRoutes(servers: OAuthServers, pool: DatabasePool, base: (ctx: AppContext) => string): Middleware {
  const mounted = new WeakMap<OAuthServer, Handler>();
  const mount = (server: OAuthServer): Handler => {
    const pages = oauthInteractionRoutes({
      provider: server.provider,
      pool,
      limits: servers.limits,
      signingSecret: servers.signingSecret,
      upstream: server.upstream,
    });
    const grants = grantsPageRoutes({ pool, limits: servers.limits, signingSecret: servers.signingSecret });
    const endpoints = oauthEndpoints(server.provider, servers.endpointLimits);
    return async (ctx, next) => {
      await pages(ctx, async () => {
        await grants(ctx, async () => {
          await endpoints(ctx, next);
        });
      });
    };
  };
  return async (ctx: AppContext, next: Next) => {
    if (!OAUTH_PATHS.test(ctx.path)) {
      await next();
      return;
    }
    const server = await servers.forBase(base(ctx));
    let handler = mounted.get(server);
    if (!handler) {
      handler = mount(server);
      mounted.set(server, handler);
    }
    await handler(ctx, next);
  };
}
