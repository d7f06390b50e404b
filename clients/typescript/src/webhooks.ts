import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verification of Intake's webhook deliveries, as the Standard Webhooks specification
 * (https://www.standardwebhooks.com/) says: `webhook-signature` holds space-separated `v1,<base64
 * HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the base64-decoded part of
 * the `whsec_` secret after its prefix. Several signatures while a rotated-out secret is still valid;
 * a receiver holding either secret (or both, passed as a list) verifies.
 */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_secret'
  | 'no_matching_signature';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Headers as fetch (`Headers`), Node's `IncomingMessage.headers` or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, either way (replayed or far-future deliveries fail). */
  toleranceSeconds?: number;
  /** The receiver's clock (tests). */
  now?: Date | number;
}

export interface VerifiedWebhook<T> {
  id: string;
  timestamp: Date;
  /** The body, parsed from the very bytes that were verified. */
  payload: T;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('invalid_secret', 'The webhook secret is empty or not base64 after whsec_');
  return key;
}

/**
 * The delivery if one of its signatures is made with one of the secrets and its timestamp is within
 * the tolerance; a WebhookVerificationError otherwise. Pass the body exactly as received (the raw
 * bytes or their text), never a re-serialized JSON object.
 */
export function verifyWebhook<T = unknown>(
  secrets: string | readonly string[],
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): VerifiedWebhook<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix seconds');
  const seconds = Number(timestamp);
  const now = Math.floor(Number(options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (seconds < now - tolerance) throw new WebhookVerificationError('timestamp_too_old', 'The webhook timestamp is too old');
  if (seconds > now + tolerance) throw new WebhookVerificationError('timestamp_too_new', 'The webhook timestamp is in the future');

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) =>
    createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest(),
  );
  // Every candidate is compared with every expected value (constant time each), so the time taken
  // says nothing about which part matched.
  let matched = false;
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    for (const digest of expected) if (given.length === digest.length && timingSafeEqual(given, digest)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'No webhook signature matches the secret');
  return { id, timestamp: new Date(seconds * 1000), payload: JSON.parse(body.toString('utf8')) as T };
}
