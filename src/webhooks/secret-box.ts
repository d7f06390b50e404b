import { openWithPayloadKeys, sealWithPayloadKeys, type PayloadKey, type SealedKind } from '../keys.js';

/**
 * Webhook signing secrets at rest. Intake must read a secret back to sign with it, so it cannot keep
 * only a hash (as it does for API keys); it keeps it sealed under the payload keys
 * (TEMPORAL_PAYLOAD_KEYS, or the key derived from SIGNING_SECRET; `sealWithPayloadKeys` in
 * src/keys.ts). A database dump alone reveals no secret.
 */
const WEBHOOK_SECRET: SealedKind = { aad: 'webhook-secret', noun: 'webhook secret', unknownKeyHint: 'add it to TEMPORAL_PAYLOAD_KEYS' };

export const sealSecret = (keys: readonly PayloadKey[], secret: string): string => sealWithPayloadKeys(WEBHOOK_SECRET, keys, secret);
export const openSecret = (keys: readonly PayloadKey[], sealed: string): string => openWithPayloadKeys(WEBHOOK_SECRET, keys, sealed);
