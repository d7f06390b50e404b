import { credentialOf, parseIdempotencyKey, requestHash } from '../../src/idempotency/request.js';
import { beginIdempotent, finishIdempotent, type IdempotencyOptions, type StoredResponse } from '../../src/idempotency/service.js';
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
 * before the handler began (401, 403, 429, 400) stores nothing, as at Stripe. What the handler
 * answers below 500, a 4xx error included, is stored and replayed for 24 hours; a 5xx or a failure
 * releases the key, so that the client may retry it.
 */
export function idempotent(deps: AppDeps, options?: IdempotencyOptions) {
  const keys = deps.config.temporal.payloadKeys ?? [];
  return async (ctx: AppContext, run: () => Promise<void>) => {
    const key = parseIdempotencyKey(ctx.req.headers[IDEMPOTENCY_HEADER.toLowerCase()]);
    if (key === undefined) return run();
    const principal = principalOf(ctx);
    const scope = { organizationId: principal.organizationId, credential: credentialOf(principal) };
    const begun = await beginIdempotent(deps.pool, keys, scope, key, requestHash(ctx.method, ctx.path, ctx.request.body), options);
    if (begun.kind === 'replay') {
      replay(ctx, begun.response);
      return;
    }
    let response: StoredResponse | null;
    try {
      await run();
      response = storable(ctx);
    } catch (error) {
      const known = classify(error);
      response =
        known && known.status < 500 ? { status: known.status, headers: known.headers, body: JSON.stringify(errorBody(known)) } : null;
      await finish(ctx, deps, keys, begun.claim, response);
      throw error;
    }
    await finish(ctx, deps, keys, begun.claim, response);
  };
}

/** Stores (or releases) without failing the request: its work is done; a lost completion is the documented crash window. */
async function finish(
  ctx: AppContext,
  deps: AppDeps,
  keys: readonly PayloadKey[],
  claim: { id: number; claim: string },
  response: StoredResponse | null,
) {
  try {
    const stored = await finishIdempotent(deps.pool, keys, claim, response);
    if (!stored && response && response.status < 500) ctx.state.log.warn({ status: response.status }, 'idempotent response not stored');
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
