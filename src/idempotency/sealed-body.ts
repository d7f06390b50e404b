import { openWithPayloadKeys, sealWithPayloadKeys, type PayloadKey, type SealedKind } from '../keys.js';

/**
 * Stored responses at rest: some creates answer a secret shown once (an ingest credential, a webhook
 * endpoint's `whsec_` secret), which Intake otherwise keeps only hashed or sealed, so every stored
 * body is sealed under the payload keys as webhook secrets are (`sealWithPayloadKeys` in src/keys.ts).
 */
const STORED_RESPONSE: SealedKind = {
  aad: 'idempotent-response',
  noun: 'stored response',
  unknownKeyHint: 'keep it in TEMPORAL_PAYLOAD_KEYS for 24 hours',
};

export const sealBody = (keys: readonly PayloadKey[], body: string): string => sealWithPayloadKeys(STORED_RESPONSE, keys, body);
export const openBody = (keys: readonly PayloadKey[], sealed: string): string => openWithPayloadKeys(STORED_RESPONSE, keys, sealed);
