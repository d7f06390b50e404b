import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { PayloadKey } from '../keys.js';

/**
 * Stored responses at rest: some creates answer a secret shown once (an ingest credential, a webhook
 * endpoint's `whsec_` secret), which Intake otherwise keeps only hashed or sealed, so every stored
 * body is sealed with AES-256-GCM under the payload keys (TEMPORAL_PAYLOAD_KEYS, or the key derived
 * from SIGNING_SECRET) as webhook secrets are (src/webhooks/secret-box.ts): the first key seals,
 * every listed key opens. Sealed form: `v1.<key id>.<base64url of iv | ciphertext | tag>`.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const aad = (keyId: string) => Buffer.from(`idempotent-response:${keyId}`);

export function sealBody(keys: readonly PayloadKey[], body: string): string {
  const first = keys[0];
  if (!first) throw new Error('sealing a stored response needs a payload key');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', first.key, iv).setAAD(aad(first.id));
  const data = Buffer.concat([iv, cipher.update(body, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${first.id}.${data.toString('base64url')}`;
}

export function openBody(keys: readonly PayloadKey[], sealed: string): string {
  const match = /^v1\.([A-Za-z0-9._-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(sealed);
  if (!match) throw new Error('not a sealed stored response');
  const key = keys.find((k) => k.id === match[1]);
  if (!key) throw new Error(`stored response sealed with unknown key id "${match[1]}": keep it in TEMPORAL_PAYLOAD_KEYS for 24 hours`);
  const data = Buffer.from(match[2]!, 'base64url');
  if (data.length < IV_BYTES + TAG_BYTES) throw new Error('sealed stored response is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key.key, data.subarray(0, IV_BYTES)).setAAD(aad(key.id));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
