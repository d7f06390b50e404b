import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { findUserClientGrantId } from '../db/repositories/oauth-models.js';

type OAuthError = Error & { error?: string; error_description?: string; statusCode?: number };
type RenderError = NonNullable<Configuration['renderError']>;

/**
 * Error responses of the authorization endpoint go back to the client's redirect URI only when
 * that URI is vouched for (RFC 9700 §4.11.2: an authorization server may redirect an error
 * automatically only to a redirect URI it trusts). Anyone may register a client with any redirect
 * URI, so a registered one proves nothing: without this, a link to `/oauth/authorize` with a
 * broken parameter sends the browser from this server to wherever the link's author registered,
 * an open redirect. Vouched for: the signed-in user approved this client before (a live grant),
 * or refused it just now on the consent page, which names where it returns. Otherwise the user
 * sees the error page (renderError) and the browser stays here.
 */
export interface ErrorRedirectGuard {
  /** The configuration's renderError: the page, remembered as shown (such an error never went to the client). */
  renderError: RenderError;
  /** Puts the check on the provider's responses. */
  install(provider: Provider): void;
}

export function errorRedirectGuard(pool: DatabasePool, renderError: RenderError): ErrorRedirectGuard {
  const errors = new WeakMap<object, OAuthError>();
  const rendered = new WeakSet<object>();
  const remember = (ctx: KoaContextWithOIDC, error: OAuthError) => {
    if (ctx.oidc?.route === 'authorization' || ctx.oidc?.route === 'resume') errors.set(ctx, error);
  };
  const vouched = async (ctx: KoaContextWithOIDC, error: OAuthError): Promise<boolean> => {
    if (ctx.oidc.route === 'resume' && error.error === 'access_denied') return true;
    const accountId = (ctx.oidc.session as { accountId?: string } | undefined)?.accountId;
    const clientId = ctx.oidc.client?.clientId;
    return !!accountId && !!clientId && (await findUserClientGrantId(pool, accountId, clientId)) !== null;
  };
  return {
    renderError: async (ctx, out, error) => {
      rendered.add(ctx);
      await renderError(ctx, out, error);
    },
    install(provider) {
      provider.on('authorization.error', remember);
      provider.on('server_error', remember);
      provider.use(async (ctx, next) => {
        await next();
        const error = errors.get(ctx);
        // Not an error of the authorization endpoint, or one already shown here as a page.
        if (!error || rendered.has(ctx)) return;
        if (await vouched(ctx as KoaContextWithOIDC, error)) return;
        ctx.remove('Location');
        ctx.status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
        await renderError(
          ctx as KoaContextWithOIDC,
          { error: error.error ?? 'server_error', error_description: error.error_description },
          error,
        );
      });
    },
  };
}
