import { createHash, createHmac } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { verifySignIn } from '../auth/sign-in.js';
import { safeEqual } from '../auth/secrets.js';
import { signInAccountKey } from '../db/repositories/users.js';
import { rateLimitAddressKey } from '../domain/client-address.js';
import type { RateDecision, RateLimiter, RateLimitStore } from '../rate-limit.js';
import type { KnownDevice } from './known-devices.js';

/**
 * Sign-in attempts. Per account and client address, a minute: guessing one password from one place.
 * Per account, an hour, looser: guessing spread over many addresses, without letting one address
 * lock the account's owner out. Per address, a minute: one place trying many accounts. An address
 * is an IPv6 client's /64 (rateLimitAddressKey). Per known device (a browser the account signed in
 * from before, known-devices.ts), an hour, instead of per account: guessing elsewhere that holds the
 * account's hour does not lock its owner out of that browser.
 */
export const LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS = 10;
export const LOGIN_ATTEMPTS_PER_ACCOUNT = 100;
export const LOGIN_ACCOUNT_WINDOW_SECONDS = 3600;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 30;
export const LOGIN_ATTEMPTS_PER_DEVICE = 20;
export const LOGIN_DEVICE_WINDOW_SECONDS = 3600;

/** The form token of one interaction: the page carries it, the POST must send it back (with the interaction's cookie). */
export function csrfToken(signingSecret: string, uid: string): string {
  return createHmac('sha256', signingSecret).update(`intake:oauth-form:${uid}`).digest('base64url');
}

export function csrfValid(signingSecret: string, uid: string, sent: unknown): boolean {
  return typeof sent === 'string' && safeEqual(Buffer.from(sent), Buffer.from(csrfToken(signingSecret, uid)));
}

/** `account`, once signed in: what a known-device cookie names (KnownDevice.account). */
export type LoginOutcome =
  | { kind: 'signed-in'; userId: string; account: string }
  | { kind: 'refused' }
  | { kind: 'limited'; retryAfterSeconds: number };

export interface LoginLimits {
  accountAddress: RateLimiter | null;
  account: RateLimiter | null;
  address: RateLimiter | null;
  device: RateLimiter | null;
}

export function loginLimits(store: RateLimitStore): LoginLimits {
  return {
    accountAddress: store.limiter('login-account-address', LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS),
    account: store.limiter('login-account-hour', LOGIN_ATTEMPTS_PER_ACCOUNT, { windowSeconds: LOGIN_ACCOUNT_WINDOW_SECONDS }),
    address: store.limiter('login-address', LOGIN_ATTEMPTS_PER_ADDRESS),
    device: store.limiter('login-device-hour', LOGIN_ATTEMPTS_PER_DEVICE, { windowSeconds: LOGIN_DEVICE_WINDOW_SECONDS }),
  };
}

const retryAfter = (decisions: (RateDecision | undefined)[]): number | null => {
  const refused = decisions.filter((d): d is RateDecision => !!d && !d.allowed);
  return refused.length ? Math.max(...refused.map((d) => d.resetSeconds), 1) : null;
};

/**
 * One sign-in attempt, counted before the password is looked at, so that guessing is bounded
 * whether the address exists or not. The account is the e-mail address as sign-in finds it
 * (signInAccountKey: PostgreSQL's lower(), the lookup's own, so that no spelling that finds the
 * account is a fresh counter). The per-account count is taken only for attempts the address
 * limits let through: an address stopped for guessing cannot use up the account's hour. An attempt
 * from a known device of the account (`devices`: the request's signed cookie, checked) is counted
 * against that device's budget instead, never against the account's hour, nor refused by it.
 */
export async function attemptLogin(
  pool: DatabasePool,
  limits: LoginLimits,
  o: { email: string; password: string; address: string; devices?: readonly KnownDevice[] },
): Promise<LoginOutcome> {
  const email = o.email.trim();
  const account = createHash('sha256')
    .update(await signInAccountKey(pool, email))
    .digest('base64url');
  const address = rateLimitAddressKey(o.address);
  const near = retryAfter(await Promise.all([limits.address?.consume(address), limits.accountAddress?.consume(`${account}:${address}`)]));
  if (near !== null) return { kind: 'limited', retryAfterSeconds: near };
  const device = o.devices?.find((d) => d.account === account);
  const far = retryAfter([await (device ? limits.device?.consume(`${account}:${device.id}`) : limits.account?.consume(account))]);
  if (far !== null) return { kind: 'limited', retryAfterSeconds: far };
  const user = await verifySignIn(pool, email, o.password);
  return user ? { kind: 'signed-in', userId: user.id, account } : { kind: 'refused' };
}

/**
 * Approval: the grant (reused when the user approved this client before) gets the scopes and the
 * resource scopes the request asks for; the grant is what is remembered until revoked.
 */
export async function approveGrant(provider: Provider, interaction: Awaited<ReturnType<Provider['interactionDetails']>>): Promise<string> {
  const { prompt, params, session } = interaction;
  const accountId = session?.accountId;
  if (!accountId) throw new Error('consent without a signed-in user');
  const grant =
    (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ??
    new provider.Grant({ accountId, clientId: params.client_id as string });
  const details = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (details.missingOIDCScope?.length) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}
