import type { Context } from 'koa';
import type { DatabasePool } from 'slonik';
import { attemptLogin, type LoginLimits } from '../../src/oauth/interactions.js';

/** How a sign-in page shows itself again: with the address typed and why it did not sign in. */
export type ShowSignIn = (ctx: Context, status: number, extra: { email?: string; error: string }) => void | Promise<void>;

/**
 * The e-mail and password form's post, as both sign-in pages take it (the consent flow's and the
 * connected applications'): the user's id, or null once the page is shown again with why (400
 * unreadable, 429 too many attempts with Retry-After, 401 wrong).
 */
export async function signInWithPasswordForm(
  ctx: Context,
  deps: { pool: DatabasePool; limits: LoginLimits },
  show: ShowSignIn,
): Promise<string | null> {
  const body = ctx.request.body as Record<string, unknown>;
  const email = typeof body.email === 'string' ? body.email : '';
  const password = typeof body.password === 'string' ? body.password : '';
  // PostgreSQL cannot hold U+0000 (a 500 otherwise), and no address is longer than 320 characters.
  if (email.includes('\u0000') || password.includes('\u0000') || email.length > 320) {
    await show(ctx, 400, { error: 'That e-mail address or password cannot be right (invalid_request).' });
    return null;
  }
  const outcome = await attemptLogin(deps.pool, deps.limits, { email, password, address: ctx.ip });
  if (outcome.kind === 'limited') {
    ctx.set('Retry-After', String(outcome.retryAfterSeconds));
    await show(ctx, 429, { email, error: `Too many sign-in attempts. Try again in ${outcome.retryAfterSeconds} seconds.` });
    return null;
  }
  if (outcome.kind === 'refused') {
    await show(ctx, 401, { email, error: 'The e-mail address or the password is wrong.' });
    return null;
  }
  return outcome.userId;
}
