import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

// Keys from the configuration: a base module, because src/config.ts derives and parses them and
// imports no feature folder (auth/ and temporal/ re-export these).

/**
 * A key for one purpose derived from SIGNING_SECRET (token signing, upload URLs, playback URLs), so
 * that a key leaked from one purpose does not open another.
 */
export function deriveKey(signingSecret: string, purpose: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', signingSecret).update(`intake:${purpose}`).digest());
}

/** A key of the Temporal payload codec (src/temporal/codec.ts). */
export interface PayloadKey {
  id: string;
  /** 32 bytes. */
  key: Uint8Array;
}

/**
 * `TEMPORAL_PAYLOAD_KEYS`: `id:base64key[,id:base64key…]`, each key 32 bytes. Returns a message for
 * a malformed value.
 */
export function parsePayloadKeys(value: string): PayloadKey[] | string {
  const keys: PayloadKey[] = [];
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/=_-]+)$/.exec(part);
    if (!match) return 'each key must be id:base64 (id of letters, digits, ".", "_" or "-")';
    const key = Buffer.from(match[2]!, 'base64');
    if (key.length !== 32) return `key ${match[1]} must be 32 bytes (base64 of 32 random bytes, e.g. openssl rand -base64 32)`;
    if (keys.some((k) => k.id === match[1])) return `key id ${match[1]} is listed twice`;
    keys.push({ id: match[1]!, key: new Uint8Array(key) });
  }
  return keys.length ? keys : 'at least one key';
}

/** What a sealed value is, for its AAD and its error messages (webhook secrets, stored idempotent responses). */
export interface SealedKind {
  /** Bound into the AAD with the key id, so a value sealed for one purpose does not open as another. */
  aad: string;
  /** How errors name the value, e.g. "webhook secret". */
  noun: string;
  /** What to do when the key that sealed it is no longer listed. */
  unknownKeyHint: string;
}

/** A payload key's KeyObject, made once per key (see EncryptionCodec: a raw key costs a KeyObject per call). */
const keyObjects = new WeakMap<Uint8Array, KeyObject>();
export function keyObject(key: Uint8Array): KeyObject {
  let made = keyObjects.get(key);
  if (!made) keyObjects.set(key, (made = createSecretKey(key)));
  return made;
}

const SEAL_IV_BYTES = 12;
const SEAL_TAG_BYTES = 16;

/**
 * AES-256-GCM under the payload keys, for values Intake must read back: the first key seals, every
 * listed key opens, so keys rotate as the payload codec's do. Sealed form:
 * `v1.<key id>.<base64url of iv | ciphertext | tag>`.
 */
export function sealWithPayloadKeys(kind: SealedKind, keys: readonly PayloadKey[], plain: string): string {
  const first = keys[0];
  if (!first) throw new Error(`sealing a ${kind.noun} needs a payload key`);
  const iv = randomBytes(SEAL_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyObject(first.key), iv).setAAD(Buffer.from(`${kind.aad}:${first.id}`));
  const data = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${first.id}.${data.toString('base64url')}`;
}

export function openWithPayloadKeys(kind: SealedKind, keys: readonly PayloadKey[], sealed: string): string {
  const match = /^v1\.([A-Za-z0-9._-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(sealed);
  if (!match) throw new Error(`not a sealed ${kind.noun}`);
  const id = match[1]!;
  const key = keys.find((k) => k.id === id);
  if (!key) throw new Error(`${kind.noun} sealed with unknown key id "${id}": ${kind.unknownKeyHint}`);
  const data = Buffer.from(match[2]!, 'base64url');
  if (data.length < SEAL_IV_BYTES + SEAL_TAG_BYTES) throw new Error(`sealed ${kind.noun} is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', keyObject(key.key), data.subarray(0, SEAL_IV_BYTES)).setAAD(
    Buffer.from(`${kind.aad}:${id}`),
  );
  decipher.setAuthTag(data.subarray(data.length - SEAL_TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(SEAL_IV_BYTES, data.length - SEAL_TAG_BYTES)), decipher.final()]).toString('utf8');
}
