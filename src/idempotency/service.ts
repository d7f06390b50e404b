import { setTimeout as sleep } from 'node:timers/promises';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import {
  claimKey,
  completeKey,
  findKey,
  releaseKey,
  type IdempotencyScope,
  type StoredResponse,
} from '../db/repositories/idempotency-keys.js';
import { AppError } from '../errors.js';
import type { PayloadKey } from '../keys.js';
import { openBody, sealBody } from './sealed-body.js';

export type { IdempotencyScope, StoredResponse } from '../db/repositories/idempotency-keys.js';

/** Responses are replayed this long after the first request (Stripe: 24 hours). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;

export interface IdempotencyOptions {
  /**
   * How long a claim holds before another request with the same key and body may take it over:
   * longer than any opted-in request takes, so that only the key of a process that died is taken.
   */
  lockSeconds: number;
  /** How long a concurrent duplicate waits for the first request before answering 409. */
  waitMs: number;
  retentionSeconds: number;
}

export const DEFAULT_IDEMPOTENCY_OPTIONS: IdempotencyOptions = {
  lockSeconds: 60,
  waitMs: 5000,
  retentionSeconds: IDEMPOTENCY_RETENTION_SECONDS,
};

/** Bodies above this are not stored (the responses of the opted-in creates are a few KiB at most). */
export const MAX_STORED_BODY_BYTES = 64 * 1024;

export interface Claim {
  id: number;
  claim: string;
}

export type Begin = { kind: 'execute'; claim: Claim } | { kind: 'replay'; response: StoredResponse };

/**
 * Starts a request with an idempotency key: it runs (`execute`, holding the key's claim) or, when the
 * key already answered the same request, its stored response is replayed. The same key with another
 * request is 422 `idempotency_key_reused`; a duplicate of a request still running waits for it up to
 * `waitMs`, then 409 `idempotency_key_in_progress`. The claim is committed before the request runs.
 */
export async function beginIdempotent(
  pool: DatabasePool,
  keys: readonly PayloadKey[],
  scope: IdempotencyScope,
  key: string,
  hash: Buffer,
  options: IdempotencyOptions = DEFAULT_IDEMPOTENCY_OPTIONS,
): Promise<Begin> {
  const deadline = Date.now() + options.waitMs;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    const claim = await claimKey(pool, scope, key, hash, options);
    if (claim) return { kind: 'execute', claim };
    const row = await findKey(pool, scope, key, hash, options.retentionSeconds);
    // Gone between the two statements (purged, or released by a failed first request): claim again.
    if (!row) continue;
    if (!row.same_request) throw new AppError('idempotency_key_reused');
    if (row.state === 'completed') {
      return {
        kind: 'replay',
        response: {
          status: row.response_status ?? 200,
          headers: row.response_headers ?? {},
          body: row.response_body === null ? null : openBody(keys, row.response_body),
        },
      };
    }
    if (Date.now() >= deadline) throw new AppError('idempotency_key_in_progress');
    // In progress (or its lock just passed: the next claim takes it over).
    await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
  }
}

/** How `finishIdempotent` left the key: its response stored, the key released, or the claim found taken over. */
export type Finish = 'stored' | 'released' | 'lost';

/**
 * Ends a request begun with `beginIdempotent`: its response is stored for replay, or, with null (a
 * 5xx, a failure, a body that is not stored), the key is released so that the client may retry it.
 * Without a payload key nothing is stored (responses are sealed). `lost`: the claim was taken over
 * meanwhile (this request outlived its lock), so nothing was written. Given the transaction of the
 * request's effect (the middleware does), the outcome commits with the effect or not at all.
 */
export async function finishIdempotent(
  db: CommonQueryMethods,
  keys: readonly PayloadKey[],
  claim: Claim,
  response: StoredResponse | null,
): Promise<Finish> {
  if (!response || response.status >= 500 || keys.length === 0 || Buffer.byteLength(response.body ?? '') > MAX_STORED_BODY_BYTES) {
    return (await releaseKey(db, claim)) ? 'released' : 'lost';
  }
  const stored = await completeKey(db, claim, { ...response, body: response.body === null ? null : sealBody(keys, response.body) });
  return stored ? 'stored' : 'lost';
}

/**
 * Runs a claimed request's effect and ends its key in one transaction: the effect writes through the
 * `db` it is given, and the response it returns is stored (or the key released) before the commit.
 * A process that dies before the commit leaves neither (once the lock passes, the retry runs the
 * effect); after it, both (the retry is replayed). What the effect throws rolls it back and is
 * rethrown: the caller then stores a 4xx answer or releases the key (`finishIdempotent` on the pool).
 * A claim taken over meanwhile (this request outlived its lock) rolls the effect back too: 409
 * `idempotency_key_in_progress`, the request holding the key answers.
 */
export async function executeIdempotent(
  pool: DatabasePool,
  keys: readonly PayloadKey[],
  claim: Claim,
  effect: (db: CommonQueryMethods) => Promise<StoredResponse | null>,
): Promise<Finish> {
  return pool.transaction(async (tx) => {
    const finish = await finishIdempotent(tx, keys, claim, await effect(tx));
    if (finish === 'lost') throw new AppError('idempotency_key_in_progress');
    return finish;
  });
}
