import { randomBytes } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { DatabasePool } from 'slonik';
import { ownGrants, revokeOwnGrant } from '../../src/auth/user-grants.js';
import { findUser } from '../../src/db/repositories/users.js';
import { NotFoundError } from '../../src/errors.js';
import { csrfToken, csrfValid, type LoginLimits } from '../../src/oauth/interactions.js';
import { signInWithPasswordForm } from './password-form.js';
import { errorPage, grantsPage, grantsSignInPage, PAGE_HEADERS } from './pages.js';

/** Where the consent page sends a user who wants to see or revoke what they approved. */
export const GRANTS_PAGE_PATH = '/oauth/grants';

/** The page's own signed cookie: a nonce for its forms and, once signed in, the user, for 15 minutes. */
const COOKIE = 'intake_grants';
const SIGNED_IN_MS = 15 * 60_000;

interface PageSession {
  nonce: string;
  userId?: string;
  expiresAt: number;
}

/**
 * "Connected applications" (issue 32, point 4): a signed-in user lists the MCP clients they approved
 * and revokes any of them, as the consent page promises. Its own sign-in (e-mail and password, with
 * the authorization server's attempt limits), its own cookie (HttpOnly, SameSite=Strict, this path
 * only), and every form bound to that cookie by a token. Plain HTML, no script.
 */
export function grantsPageRoutes(deps: { pool: DatabasePool; limits: LoginLimits; signingSecret: string }): Middleware {
  const router = new Router();
  const form = bodyParser({ enableTypes: ['form'], formLimit: '8kb' });
  const formId = (s: PageSession) => `grants:${s.nonce}`;

  const read = (ctx: Context): PageSession | null => {
    const raw = ctx.cookies.get(COOKIE, { signed: true });
    if (!raw) return null;
    try {
      const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<PageSession>;
      if (typeof v.nonce !== 'string' || typeof v.expiresAt !== 'number' || v.expiresAt <= Date.now()) return null;
      return { nonce: v.nonce, expiresAt: v.expiresAt, ...(typeof v.userId === 'string' ? { userId: v.userId } : {}) };
    } catch {
      return null;
    }
  };
  const write = (ctx: Context, session: PageSession | null) =>
    ctx.cookies.set(COOKIE, session ? Buffer.from(JSON.stringify(session)).toString('base64url') : null, {
      signed: true,
      httpOnly: true,
      sameSite: 'strict',
      secure: ctx.secure,
      path: GRANTS_PAGE_PATH,
      maxAge: session ? Math.max(0, session.expiresAt - Date.now()) : undefined,
      overwrite: true,
    });
  const fresh = (userId?: string): PageSession => ({
    nonce: randomBytes(16).toString('base64url'),
    expiresAt: Date.now() + SIGNED_IN_MS,
    ...(userId ? { userId } : {}),
  });
  const page = (ctx: Context, status: number, html: string) => {
    ctx.set(PAGE_HEADERS);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html;
  };
  const signIn = (ctx: Context, status = 200, extra: { email?: string; error?: string } = {}) => {
    const session = fresh();
    write(ctx, session);
    page(
      ctx,
      status,
      grantsSignInPage({ action: `${GRANTS_PAGE_PATH}/sign-in`, csrf: csrfToken(deps.signingSecret, formId(session)), ...extra }),
    );
  };
  /** The signed-in user of a form that came from this page, or an answer already given. */
  const checked = (ctx: Context, needUser: boolean): PageSession | null => {
    const session = read(ctx);
    const sent = (ctx.request.body as Record<string, unknown> | undefined)?.csrf;
    if (!session || !csrfValid(deps.signingSecret, formId(session), sent)) {
      page(ctx, 403, errorPage('Form expired', 'This form has expired or was not sent from this page. Open the page again.'));
      return null;
    }
    if (needUser && !session.userId) {
      signIn(ctx, 401, { error: 'Sign in first.' });
      return null;
    }
    return session;
  };
  const back = (ctx: Context) => {
    ctx.status = 303;
    ctx.redirect(GRANTS_PAGE_PATH);
  };

  router.get(GRANTS_PAGE_PATH, async (ctx) => {
    const session = read(ctx);
    const user = session?.userId ? await findUser(deps.pool, session.userId) : null;
    if (!session || !user || user.status !== 'active') return signIn(ctx);
    const csrf = csrfToken(deps.signingSecret, formId(session));
    page(ctx, 200, grantsPage({ base: GRANTS_PAGE_PATH, csrf, email: user.email, grants: await ownGrants(deps.pool, user.id) }));
  });

  router.post(`${GRANTS_PAGE_PATH}/sign-in`, form, async (ctx) => {
    if (!checked(ctx, false)) return;
    const userId = await signInWithPasswordForm(ctx, deps, signIn);
    if (userId === null) return;
    // A new nonce on sign-in: a form token seen before it is worth nothing after.
    write(ctx, fresh(userId));
    back(ctx);
  });

  router.post(`${GRANTS_PAGE_PATH}/revoke`, form, async (ctx) => {
    const session = checked(ctx, true);
    if (!session) return;
    const grantId = (ctx.request.body as Record<string, unknown>).grant;
    try {
      await revokeOwnGrant(deps.pool, session.userId!, typeof grantId === 'string' ? grantId : '');
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      // Revoked already (another tab, the CLI): the list shows what is left.
    }
    back(ctx);
  });

  router.post(`${GRANTS_PAGE_PATH}/sign-out`, form, (ctx) => {
    if (!checked(ctx, false)) return;
    write(ctx, null);
    back(ctx);
  });

  return router.routes() as Middleware;
}
