import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// The configuration derives the payload keys with it (src/config.ts may import no feature folder).
export { deriveKey } from '../keys.js';

/**
 * Random credentials that are shown once and stored only as a hash. They carry 256 bits of entropy,
 * so a plain SHA-256 (looked up by equality) is enough; a slow hash would only slow every request.
 */
export function generateSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, secret.indexOf('_') + 7);
}

export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
