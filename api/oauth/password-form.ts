import type { Context } from 'koa';
import type { DatabasePool } from 'slonik';
import { attemptLogin, type LoginLimits } from '../../src/oauth/interactions.js';
import { KNOWN_DEVICE_COOKIE, KNOWN_DEVICE_DAYS, readKnownDevices, rememberDevice } from '../../src/oauth/known-devices.js';

/** How a sign-in page shows itself again: with the address typed and why it did not sign in. */
export type ShowSignIn = (ctx: Context, status: number, extra: { email?: string; error: string }) => void | Promise<void>;

/** Both sign-in pages are under /oauth (the consent flow's and /oauth/grants): the known-device cookie's path. */
const KNOWN_DEVICE_PATH = '/oauth';

/**
 * The e-mail and password form's post, as both sign-in pages take it (the consent flow's and the
 * connected applications'): the user's id, or null once the page is shown again with why (400
 * unreadable, 429 too many attempts with Retry-After, 401 wrong). A successful sign-in makes this
 * browser a known device of the account (a cookie signed with the app's cookie keys, which Koa checks).
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
  const devices = readKnownDevices(ctx.cookies.get(KNOWN_DEVICE_COOKIE, { signed: true }));
  const outcome = await attemptLogin(deps.pool, deps.limits, { email, password, address: ctx.ip, devices });
  if (outcome.kind === 'limited') {
    ctx.set('Retry-After', String(outcome.retryAfterSeconds));
    await show(ctx, 429, { email, error: `Too many sign-in attempts. Try again in ${outcome.retryAfterSeconds} seconds.` });
    return null;
  }
  if (outcome.kind === 'refused') {
    await show(ctx, 401, { email, error: 'The e-mail address or the password is wrong.' });
    return null;
  }
  ctx.cookies.set(KNOWN_DEVICE_COOKIE, rememberDevice(devices, outcome.account), {
    signed: true,
    httpOnly: true,
    sameSite: 'strict',
    secure: ctx.secure,
    path: KNOWN_DEVICE_PATH,
    maxAge: KNOWN_DEVICE_DAYS * 86_400_000,
    overwrite: true,
  });
  return outcome.userId;
}
