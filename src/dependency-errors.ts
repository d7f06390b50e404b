import { BackendTerminatedError, ConnectionError } from 'slonik';

/**
 * Errors that mean a dependency is down (not that the request is wrong): the API answers 503
 * and recovers by itself when the dependency returns.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);
// PostgreSQL SQLSTATEs: connection exceptions (08xxx), shutdown/crash (57P01-57P03), too many connections.
const PG_UNAVAILABLE = /^(08\d{3}|57P0[123]|53300)$/;
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Connection ended|the database system is (starting up|shutting down)/i;
// gRPC status codes: UNAVAILABLE, DEADLINE_EXCEEDED.
const GRPC_UNAVAILABLE = new Set([14, 4]);

function* causes(error: unknown): Generator<Record<string, unknown>> {
  let current = error;
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth++) {
    yield current as Record<string, unknown>;
    current = (current as { cause?: unknown }).cause;
  }
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (const e of causes(error)) {
    if (e instanceof ConnectionError || e instanceof BackendTerminatedError) return true;
    if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))) return true;
    if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
  }
  return false;
}

export function isTemporalUnavailable(error: unknown): boolean {
  for (const e of causes(error)) {
    const grpcLike = typeof e.code === 'number' && 'details' in e;
    if (grpcLike && GRPC_UNAVAILABLE.has(e.code as number)) return true;
    if (
      (e as { name?: unknown }).name === 'ServiceError' &&
      typeof e.message === 'string' &&
      /UNAVAILABLE|DEADLINE_EXCEEDED|connect/i.test(e.message)
    )
      return true;
  }
  return false;
}

/** PostgreSQL's lock_not_available (55P03): a statement gave up waiting for a lock (`lock_timeout`). */
export function isLockTimeout(error: unknown): boolean {
  for (const e of causes(error)) if (e.code === '55P03') return true;
  return false;
}
