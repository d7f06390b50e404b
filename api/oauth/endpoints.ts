import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

/** The provider's own endpoints; `/oauth/interaction/*` are the API's pages, `/.well-known/oauth-protected-resource` its metadata. */
const PROVIDER_PATHS = /^\/(?:oauth\/(?!interaction(?:\/|$))|\.well-known\/(?:oauth-authorization-server|openid-configuration)(?:\/|$))/;

/**
 * Hands the authorization server's requests to oidc-provider (which reads the bodies itself: no
 * body parser runs before it); the rest goes on to the API's routes.
 */
export function oauthEndpoints(provider: Provider): Middleware {
  const callback = provider.callback();
  return async (ctx, next) => {
    if (!PROVIDER_PATHS.test(ctx.path)) {
      await next();
      return;
    }
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };
}
