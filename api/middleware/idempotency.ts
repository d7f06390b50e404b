import { credentialOf, parseIdempotencyKey, requestHash } from '../../src/idempotency/request.js';
import type { CommonQueryMethods } from 'slonik';
import {
  beginIdempotent,
  executeIdempotent,
  finishIdempotent,
  type Finish,
  type IdempotencyOptions,
  type StoredResponse,
} from '../../src/idempotency/service.js';
import type { PayloadKey } from '../../src/keys.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from './auth.js';
import { classify, errorBody } from './errors.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Set on a replayed response (Stripe's name). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The response headers a replay repeats; the rest (rate limits, request id) belong to each request. */
const STORED_HEADERS = ['location', 'content-location', 'cache-control'];

/**
 * `Idempotency-Key` on a route with `idempotent: true` (docs/guides/idempotency.md): run by the
 * registry around the handler, after authentication and validation, so that a request refused
 * before the handler began (401, 403, 429, 400) stores nothing, as at Stripe. The handler writes
 * through the transaction it is given, in which its response is stored before the commit: the effect
 * and the key's completion commit together (decision 0217). What the handler answers below 500, a
 * 4xx error included, is replayed for 24 hours; a 5xx or a failure releases the key, so that the
 * client may retry it.
 */
export function idempotent(deps: AppDeps, options?: IdempotencyOptions) {
  const keys = deps.config.temporal.payloadKeys ?? [];
  return async (ctx: AppContext, run: (db: CommonQueryMethods) => Promise<void>) => {
    const key = parseIdempotencyKey(ctx.req.headers[IDEMPOTENCY_HEADER.toLowerCase()]);
    if (key === undefined) return run(deps.pool);
    const principal = principalOf(ctx);
    const scope = { organizationId: principal.organizationId, credential: credentialOf(principal) };
    const begun = await beginIdempotent(deps.pool, keys, scope, key, requestHash(ctx.method, ctx.path, ctx.request.body), options);
    if (begun.kind === 'replay') {
      replay(ctx, begun.response);
      return;
    }
    let finish: Finish;
    try {
      finish = await executeIdempotent(deps.pool, keys, begun.claim, async (db) => {
        await run(db);
        return storable(ctx);
      });
    } catch (error) {
      // Rolled back: nothing of the effect committed. An answer of the operation's own (a 4xx) is stored; anything else releases the key.
      const known = classify(error);
      const response =
        known && known.status < 500 ? { status: known.status, headers: known.headers, body: JSON.stringify(errorBody(known)) } : null;
      await finishAfterFailure(ctx, deps, keys, begun.claim, response);
      throw error;
    }
    if (finish === 'released' && ctx.status < 500) ctx.state.log.warn({ status: ctx.status }, 'idempotent response not stored');
  };
}

/** Stores a failed request's 4xx answer (or releases its key) without failing the request further; a key left claimed is retried once its lock passes. */
async function finishAfterFailure(
  ctx: AppContext,
  deps: AppDeps,
  keys: readonly PayloadKey[],
  claim: { id: number; claim: string },
  response: StoredResponse | null,
) {
  try {
    const finish = await finishIdempotent(deps.pool, keys, claim, response);
    if (finish === 'released' && response && response.status < 500)
      ctx.state.log.warn({ status: response.status }, 'idempotent response not stored');
  } catch (error) {
    ctx.state.log.error({ err: error }, 'could not record the idempotent response; the key is retried once its lock passes');
  }
}

/** The handler's response as stored: JSON or empty bodies only (what the opted-in routes answer). */
function storable(ctx: AppContext): StoredResponse | null {
  const body: unknown = ctx.body;
  let text: string | null;
  if (body === null || body === undefined) text = null;
  else if (typeof body === 'string' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return null;
  else text = JSON.stringify(body);
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = value;
  }
  return { status: ctx.status, headers, body: text };
}

function replay(ctx: AppContext, response: StoredResponse): void {
  ctx.set(response.headers);
  ctx.set(REPLAYED_HEADER, 'true');
  if (response.body !== null) {
    ctx.type = 'application/json';
    ctx.body = response.body;
  }
  ctx.status = response.status;
}
