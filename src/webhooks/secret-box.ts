import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { PayloadKey } from '../keys.js';

/**
 * Webhook signing secrets at rest. Intake must read a secret back to sign with it, so it cannot keep
 * only a hash (as it does for API keys); it keeps it sealed with AES-256-GCM under the payload keys
 * (TEMPORAL_PAYLOAD_KEYS, or the key derived from SIGNING_SECRET): the first key seals, every listed
 * key opens, so the keys rotate as the payload codec's do. A database dump alone reveals no secret.
 * Sealed form: `v1.<key id>.<base64url of iv | ciphertext | tag>`.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function sealSecret(keys: readonly PayloadKey[], secret: string): string {
  const first = keys[0];
  if (!first) throw new Error('sealing a webhook secret needs a payload key');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', first.key, iv);
  cipher.setAAD(Buffer.from(`webhook-secret:${first.id}`));
  const data = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${first.id}.${data.toString('base64url')}`;
}

export function openSecret(keys: readonly PayloadKey[], sealed: string): string {
  const match = /^v1\.([A-Za-z0-9._-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(sealed);
  if (!match) throw new Error('not a sealed webhook secret');
  const id = match[1]!;
  const key = keys.find((k) => k.id === id);
  if (!key) throw new Error(`webhook secret sealed with unknown key id "${id}": add it to TEMPORAL_PAYLOAD_KEYS`);
  const data = Buffer.from(match[2]!, 'base64url');
  if (data.length < IV_BYTES + TAG_BYTES) throw new Error('sealed webhook secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key.key, data.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(`webhook-secret:${id}`));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
