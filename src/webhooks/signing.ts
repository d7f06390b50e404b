import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/**
 * Signing as the Standard Webhooks specification says (https://www.standardwebhooks.com/, the scheme
 * Svix, Clerk, Resend and others use, with verifiers in many languages: npm and PyPI `standardwebhooks`):
 * - the secret is `whsec_` + base64 of 24 to 64 random bytes; the HMAC key is the decoded bytes;
 * - the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, the timestamp in Unix seconds;
 * - `webhook-signature` is `v1,<base64 HMAC-SHA256>`, several space-separated while a rotated-out
 *   secret is still valid, so a receiver holding either secret verifies.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The HMAC key of a secret, as a KeyObject: a sender makes it once per batch, not per attempt
 * (handed the raw bytes, every createHmac makes one: about 25 µs against 3 µs).
 */
export function signingKey(secret: string): KeyObject {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return createSecretKey(Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64'));
}

export function signature(secret: string | KeyObject, id: string, timestampSeconds: number, body: string): string {
  const key = typeof secret === 'string' ? signingKey(secret) : secret;
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt, signed with every secret (or its signingKey) given, current first. */
export function signedHeaders(
  secrets: readonly (string | KeyObject)[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' '),
  };
}
