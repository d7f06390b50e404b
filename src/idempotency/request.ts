import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { credentialOf } from '../auth/principal.js';
import { AppError } from '../errors.js';

/** Stripe's limit: a client's UUID v4 fits many times over. */
export const MAX_KEY_LENGTH = 255;

/**
 * The key of a request's `Idempotency-Key` header: undefined when the header is absent; 400
 * `idempotency_key_invalid` when it is empty (after trimming), longer than 255 characters, or not
 * printable ASCII (a header cannot carry more without an encoding, and a key is an opaque token).
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = (Array.isArray(header) ? header.join(', ') : header).trim();
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw new AppError('idempotency_key_invalid');
  }
  return key;
}

/**
 * SHA-256 of the canonical request: the method, the path and the JSON body with its object keys
 * sorted, so that the same request serialized in another key order or with other whitespace is the
 * same request, and any other value, path or method is another.
 */
export function requestHash(method: string, path: string, body: unknown): Buffer {
  return createHash('sha256')
    .update(stringify([method.toUpperCase(), path, body ?? null]) ?? 'null')
    .digest();
}

/** The credential a key belongs to, within its organization. */
export { credentialOf };
