import { createHmac } from 'node:crypto';

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
