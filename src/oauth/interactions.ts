import { createHmac } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { verifySignIn } from '../auth/sign-in.js';
import { safeEqual } from '../auth/secrets.js';
import type { RateLimiter, RateLimitStore } from '../rate-limit.js';

/** Sign-in attempts a minute: per account (guessing one password), per client address (trying many accounts). */
export const LOGIN_ATTEMPTS_PER_ACCOUNT = 10;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 30;

/** The form token of one interaction: the page carries it, the POST must send it back (with the interaction's cookie). */
export function csrfToken(signingSecret: string, uid: string): string {
  return createHmac('sha256', signingSecret).update(`intake:oauth-form:${uid}`).digest('base64url');
}

export function csrfValid(signingSecret: string, uid: string, sent: unknown): boolean {
  return typeof sent === 'string' && safeEqual(Buffer.from(sent), Buffer.from(csrfToken(signingSecret, uid)));
}

export type LoginOutcome = { kind: 'signed-in'; userId: string } | { kind: 'refused' } | { kind: 'limited'; retryAfterSeconds: number };

export interface LoginLimits {
  account: RateLimiter | null;
  address: RateLimiter | null;
}

export function loginLimits(store: RateLimitStore): LoginLimits {
  return { account: store.limiter('login-account', LOGIN_ATTEMPTS_PER_ACCOUNT), address: store.limiter('login-address', LOGIN_ATTEMPTS_PER_ADDRESS) };
}

/**
 * One sign-in attempt: counted per address and per account (the e-mail, any case) before the
 * password is looked at, so that guessing is bounded whether the address exists or not.
 */
export async function attemptLogin(pool: DatabasePool, limits: LoginLimits, o: { email: string; password: string; address: string }): Promise<LoginOutcome> {
  const decisions = await Promise.all([
    limits.address?.consume(`address:${o.address}`), limits.account?.consume(`account:${o.email.trim().toLowerCase()}`),
  ]);
  const refused = decisions.filter((d) => d && !d.allowed);
  if (refused.length) return { kind: 'limited', retryAfterSeconds: Math.max(...refused.map((d) => d!.resetSeconds), 1) };
  const user = await verifySignIn(pool, o.email, o.password);
  return user ? { kind: 'signed-in', userId: user.id } : { kind: 'refused' };
}

/**
 * Approval: the grant (reused when the user approved this client before) gets the scopes and the
 * resource scopes the request asks for; the grant is what is remembered until revoked.
 */
export async function approveGrant(provider: Provider, interaction: Awaited<ReturnType<Provider['interactionDetails']>>): Promise<string> {
  const { prompt, params, session } = interaction;
  const accountId = session?.accountId;
  if (!accountId) throw new Error('consent without a signed-in user');
  const grant = (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined)
    ?? new provider.Grant({ accountId, clientId: params.client_id as string });
  const details = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  if (details.missingOIDCScope?.length) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  return grant.save();
}
