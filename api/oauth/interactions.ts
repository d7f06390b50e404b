import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { findUser } from '../../src/db/repositories/users.js';
import { MCP_SCOPES } from '../../src/oauth/provider.js';
import { approveGrant, csrfToken, csrfValid, type LoginLimits } from '../../src/oauth/interactions.js';
import type { Logger } from '../../src/logger.js';
import { UPSTREAM_CALLBACK_PATH } from '../../src/oauth/server.js';
import { UpstreamUnavailableError, type UpstreamSignIn, type UpstreamState } from '../../src/oauth/upstream.js';
import { GRANTS_PAGE_PATH } from './grants-page.js';
import { signInWithPasswordForm } from './password-form.js';
import { consentPage, errorPage, formTarget, loginPage, PAGE_HEADERS, pageHeaders } from './pages.js';

export interface InteractionDeps {
  provider: Provider;
  pool: DatabasePool;
  limits: LoginLimits;
  signingSecret: string;
  /** Sign-in at the company's OpenID Connect provider, when configured. */
  upstream?: UpstreamSignIn;
}

/** The signed cookie that carries an upstream sign-in's state, nonce and PKCE verifier to the callback. */
const UPSTREAM_COOKIE = 'intake_upstream';
const UPSTREAM_COOKIE_MS = 10 * 60_000;

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/**
 * The authorization server's pages (`/oauth/interaction/:uid`): sign-in with e-mail and password,
 * then an explicit approval naming the client, where it returns to and the scopes. Forms carry a
 * token bound to the interaction, which is itself bound to the browser by oidc-provider's cookie.
 */
export function oauthInteractionRoutes(deps: InteractionDeps): Middleware {
  const router = new Router();
  const form = bodyParser({ enableTypes: ['form'], formLimit: '8kb' });

  const page = (ctx: Context, status: number, html: string, formTargets: readonly string[] = []) => {
    ctx.set(formTargets.length ? pageHeaders(formTargets) : PAGE_HEADERS);
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
      page(
        ctx,
        400,
        errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser. Start again from your application.'),
      );
      return null;
    }
  };
  const client = async (d: Details) => {
    const c = await deps.provider.Client.find(d.params.client_id as string);
    const redirect = typeof d.params.redirect_uri === 'string' ? d.params.redirect_uri : '';
    return {
      name: c?.clientName ?? (d.params.client_id as string),
      redirectHost: URL.canParse(redirect) ? new URL(redirect).host || redirect : redirect,
    };
  };
  /** Where the consent page's forms lead: the client's redirect URI (approval or denial). */
  const redirectTargetOf = (d: Details): string[] => {
    const redirect = typeof d.params.redirect_uri === 'string' ? formTarget(d.params.redirect_uri) : null;
    return redirect ? [redirect] : [];
  };
  /** And the sign-in page's: the redirect URI (a remembered grant returns at once) and the identity provider. */
  const loginTargetsOf = async (d: Details): Promise<string[]> => [...redirectTargetOf(d), ...((await deps.upstream?.formTargets()) ?? [])];
  const showLogin = async (ctx: Context, d: Details, status = 200, extra: { email?: string; error?: string } = {}) => {
    const { name } = await client(d);
    const upstream = deps.upstream ? { action: `/oauth/interaction/${d.uid}/upstream`, name: deps.upstream.displayName } : undefined;
    page(
      ctx,
      status,
      loginPage({
        action: `/oauth/interaction/${d.uid}/login`,
        csrf: csrfToken(deps.signingSecret, d.uid),
        clientName: name,
        upstream,
        ...extra,
      }),
      await loginTargetsOf(d),
    );
  };
  const upstreamCookie = (ctx: Context, value: string | null) =>
    ctx.cookies.set(UPSTREAM_COOKIE, value, {
      signed: true,
      httpOnly: true,
      sameSite: 'lax',
      secure: ctx.secure,
      path: '/oauth',
      maxAge: value ? UPSTREAM_COOKIE_MS : undefined,
      overwrite: true,
    });
  const upstreamState = (ctx: Context): UpstreamState | null => {
    const raw = ctx.cookies.get(UPSTREAM_COOKIE, { signed: true });
    if (!raw) return null;
    try {
      const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<UpstreamState>;
      return typeof v.uid === 'string' && typeof v.state === 'string' && typeof v.nonce === 'string' && typeof v.verifier === 'string'
        ? { uid: v.uid, state: v.state, nonce: v.nonce, verifier: v.verifier }
        : null;
    } catch {
      return null;
    }
  };
  const upstreamUnavailable = async (ctx: Context, d: Details, upstream: UpstreamSignIn, error: unknown) => {
    if (!(error instanceof UpstreamUnavailableError)) throw error;
    (ctx.state as { log?: Logger }).log?.warn({ err: error }, 'upstream sign-in unavailable');
    await showLogin(ctx, d, 502, {
      error: `${upstream.displayName} could not be reached. Try again, or sign in with your e-mail address and password.`,
    });
  };
  /** An upstream sign-in this browser did not start, or whose cookie expired. */
  const notStartedHere = (ctx: Context) =>
    page(
      ctx,
      400,
      errorPage('Sign-in expired', 'This sign-in was not started in this browser, or has expired. Start again from your application.'),
    );
  const checked = (ctx: Context, d: Details): boolean => {
    if (csrfValid(deps.signingSecret, d.uid, (ctx.request.body as Record<string, unknown> | undefined)?.csrf)) return true;
    page(ctx, 403, errorPage('Form expired', 'This form was not sent from the sign-in page. Start again from your application.'));
    return false;
  };

  router.get('/oauth/interaction/:uid', async (ctx) => {
    const d = await details(ctx);
    if (!d) return;
    if (d.prompt.name === 'login') return showLogin(ctx, d);
    const user = d.session?.accountId ? await findUser(deps.pool, d.session.accountId) : null;
    const { name, redirectHost } = await client(d);
    // The scopes asked for, whether granted before or not; none missing: approved before (a native client asked again).
    const missing = d.prompt.details as { missingResourceScopes?: Record<string, string[]>; missingOIDCScope?: string[] };
    const missingScopes = [...new Set(Object.values(missing.missingResourceScopes ?? {}).flat())];
    const requested = (typeof d.params.scope === 'string' ? d.params.scope : '')
      .split(' ')
      .filter((s) => (MCP_SCOPES as readonly string[]).includes(s));
    page(
      ctx,
      200,
      consentPage({
        action: `/oauth/interaction/${d.uid}/confirm`,
        csrf: csrfToken(deps.signingSecret, d.uid),
        clientName: name,
        redirectHost,
        scopes: [...new Set([...requested, ...missingScopes])],
        email: user?.email ?? '',
        approvedBefore: missingScopes.length === 0,
        grantsUrl: GRANTS_PAGE_PATH,
      }),
      redirectTargetOf(d),
    );
  });

  router.post('/oauth/interaction/:uid/login', form, async (ctx) => {
    const d = await details(ctx);
    if (!d || !checked(ctx, d)) return;
    const userId = await signInWithPasswordForm(ctx, deps, (c, status, extra) => showLogin(c, d, status, extra));
    if (userId === null) return;
    await deps.provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: userId } }, { mergeWithLastSubmission: false });
    ctx.respond = false;
  });

  // Sign-in at the company's provider: off to it, with state, nonce and PKCE kept in a signed cookie.
  router.post('/oauth/interaction/:uid/upstream', form, async (ctx) => {
    const d = await details(ctx);
    if (!d || !checked(ctx, d)) return;
    const upstream = deps.upstream;
    if (!upstream) return void page(ctx, 404, errorPage('Not available', 'Single sign-on is not configured here.'));
    try {
      const { url, state } = await upstream.begin(d.uid);
      upstreamCookie(ctx, Buffer.from(JSON.stringify(state)).toString('base64url'));
      ctx.status = 303;
      ctx.redirect(url.toString());
    } catch (error) {
      await upstreamUnavailable(ctx, d, upstream, error);
    }
  });

  // Back from the provider (the callback route sends the browser here, where the interaction's cookie is).
  router.get('/oauth/interaction/:uid/upstream', async (ctx) => {
    const d = await details(ctx);
    if (!d) return;
    const upstream = deps.upstream;
    const state = upstreamState(ctx);
    if (!upstream || !state || state.uid !== d.uid) return notStartedHere(ctx);
    upstreamCookie(ctx, null);
    const query = new URLSearchParams(ctx.querystring);
    if (query.has('error')) {
      return showLogin(ctx, d, 401, { error: `The sign-in at ${upstream.displayName} was cancelled or refused.` });
    }
    try {
      const callback = new URL(upstream.redirectUri);
      callback.search = ctx.querystring;
      const outcome = await upstream.complete(callback, state);
      if (outcome.kind === 'refused') {
        (ctx.state as { log?: Logger }).log?.info({ reason: outcome.reason, detail: outcome.detail }, 'upstream sign-in refused');
        return showLogin(ctx, d, 403, { error: outcome.reason });
      }
      await deps.provider.interactionFinished(
        ctx.req,
        ctx.res,
        { login: { accountId: outcome.userId } },
        { mergeWithLastSubmission: false },
      );
      ctx.respond = false;
    } catch (error) {
      await upstreamUnavailable(ctx, d, upstream, error);
    }
  });

  router.post('/oauth/interaction/:uid/confirm', form, async (ctx) => {
    const d = await details(ctx);
    if (!d || !checked(ctx, d)) return;
    // A consent form posted before anyone signed in (a 500 before): nothing to approve yet.
    if (d.prompt.name !== 'consent' || !d.session?.accountId) {
      return page(
        ctx,
        400,
        errorPage(
          'Sign in first',
          'Sign in before you approve or deny an application (login_required). Start again from your application.',
        ),
      );
    }
    const decision = (ctx.request.body as Record<string, unknown>).decision;
    const result =
      decision === 'approve'
        ? { consent: { grantId: await approveGrant(deps.provider, d) } }
        : { error: 'access_denied', error_description: 'The user denied access.' };
    await deps.provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.respond = false;
  });

  /**
   * `/oauth/upstream/callback`, the one redirect URI registered at the provider: sends the browser
   * on to its interaction's page (whose path carries oidc-provider's interaction cookie).
   */
  router.get(UPSTREAM_CALLBACK_PATH, (ctx) => {
    const state = deps.upstream ? upstreamState(ctx) : null;
    if (!state) return notStartedHere(ctx);
    ctx.status = 303;
    ctx.redirect(`/oauth/interaction/${encodeURIComponent(state.uid)}/upstream${ctx.search}`);
  });

  return router.routes() as Middleware;
}
