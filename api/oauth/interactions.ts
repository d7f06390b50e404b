import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { findUser } from '../../src/db/repositories/users.js';
import { MCP_SCOPES } from '../../src/oauth/provider.js';
import { approveGrant, attemptLogin, csrfToken, csrfValid, type LoginLimits } from '../../src/oauth/interactions.js';
import { consentPage, errorPage, loginPage, PAGE_HEADERS } from './pages.js';

export interface InteractionDeps {
  provider: Provider;
  pool: DatabasePool;
  limits: LoginLimits;
  signingSecret: string;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/**
 * The authorization server's pages (`/oauth/interaction/:uid`): sign-in with e-mail and password,
 * then an explicit approval naming the client, where it returns to and the scopes. Forms carry a
 * token bound to the interaction, which is itself bound to the browser by oidc-provider's cookie.
 */
export function oauthInteractionRoutes(deps: InteractionDeps): Middleware {
  const router = new Router({ prefix: '/oauth/interaction' });
  const form = bodyParser({ enableTypes: ['form'], formLimit: '8kb' });

  const page = (ctx: Context, status: number, html: string) => {
    ctx.set(PAGE_HEADERS);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html;
  };
  /** The interaction of this browser, or an error page (expired, or opened in another browser). */
  const details = async (ctx: Context): Promise<Details | null> => {
    try {
      const d = await deps.provider.interactionDetails(ctx.req, ctx.res);
      if (d.uid !== (ctx.params as Record<string, string>).uid) throw new Error('another interaction');
      return d;
    } catch {
      page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser. Start again from your application.'));
      return null;
    }
  };
  const client = async (d: Details) => {
    const c = await deps.provider.Client.find(d.params.client_id as string);
    const redirect = typeof d.params.redirect_uri === 'string' ? d.params.redirect_uri : '';
    return { name: c?.clientName ?? (d.params.client_id as string), redirectHost: URL.canParse(redirect) ? new URL(redirect).host || redirect : redirect };
  };
  const showLogin = async (ctx: Context, d: Details, status = 200, extra: { email?: string; error?: string } = {}) => {
    const { name } = await client(d);
    page(ctx, status, loginPage({ action: `/oauth/interaction/${d.uid}/login`, csrf: csrfToken(deps.signingSecret, d.uid), clientName: name, ...extra }));
  };
  const checked = (ctx: Context, d: Details): boolean => {
    if (csrfValid(deps.signingSecret, d.uid, (ctx.request.body as Record<string, unknown> | undefined)?.csrf)) return true;
    page(ctx, 403, errorPage('Form expired', 'This form was not sent from the sign-in page. Start again from your application.'));
    return false;
  };

  router.get('/:uid', async (ctx) => {
    const d = await details(ctx);
    if (!d) return;
    if (d.prompt.name === 'login') return showLogin(ctx, d);
    const user = d.session?.accountId ? await findUser(deps.pool, d.session.accountId) : null;
    const { name, redirectHost } = await client(d);
    // The scopes asked for, whether granted before or not; none missing: approved before (a native client asked again).
    const missing = d.prompt.details as { missingResourceScopes?: Record<string, string[]>; missingOIDCScope?: string[] };
    const missingScopes = [...new Set(Object.values(missing.missingResourceScopes ?? {}).flat())];
    const requested = (typeof d.params.scope === 'string' ? d.params.scope : '').split(' ').filter((s) => (MCP_SCOPES as readonly string[]).includes(s));
    page(ctx, 200, consentPage({
      action: `/oauth/interaction/${d.uid}/confirm`, csrf: csrfToken(deps.signingSecret, d.uid), clientName: name, redirectHost,
      scopes: [...new Set([...requested, ...missingScopes])], email: user?.email ?? '', approvedBefore: missingScopes.length === 0,
    }));
  });

  router.post('/:uid/login', form, async (ctx) => {
    const d = await details(ctx);
    if (!d || !checked(ctx, d)) return;
    const body = ctx.request.body as Record<string, unknown>;
    const email = typeof body.email === 'string' ? body.email : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const outcome = await attemptLogin(deps.pool, deps.limits, { email, password, address: ctx.ip });
    if (outcome.kind === 'limited') {
      ctx.set('Retry-After', String(outcome.retryAfterSeconds));
      return showLogin(ctx, d, 429, { email, error: `Too many sign-in attempts. Try again in ${outcome.retryAfterSeconds} seconds.` });
    }
    if (outcome.kind === 'refused') return showLogin(ctx, d, 401, { email, error: 'The e-mail address or the password is wrong.' });
    await deps.provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: outcome.userId } }, { mergeWithLastSubmission: false });
    ctx.respond = false;
  });

  router.post('/:uid/confirm', form, async (ctx) => {
    const d = await details(ctx);
    if (!d || !checked(ctx, d)) return;
    const decision = (ctx.request.body as Record<string, unknown>).decision;
    const result = decision === 'approve'
      ? { consent: { grantId: await approveGrant(deps.provider, d) } }
      : { error: 'access_denied', error_description: 'The user denied access.' };
    await deps.provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.respond = false;
  });

  return router.routes() as Middleware;
}
