import type { Next } from 'koa';
import { AppError, DependencyUnavailableError, ERROR_CATALOGUE, MalformedJsonError, type ErrorKey } from '../../src/errors.js';
import { isDatabaseUnavailable, isTemporalUnavailable } from '../../src/dependency-errors.js';
import type { AppContext } from '../context.js';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

/** Errors raised by Koa, the router and the body parser (http-errors), mapped to our codes. */
function fromHttpError(error: HttpLikeError): AppError | null {
  const status = error.status ?? error.statusCode;
  if (!status || status < 400 || status >= 500) return null;
  // co-body rethrows JSON.parse's SyntaxError with status 400
  if (error.type === 'entity.parse.failed' || error instanceof SyntaxError) return new MalformedJsonError();
  if (error.type === 'entity.too.large' || status === 413) return new AppError('payload_too_large');
  if (error.type === 'encoding.unsupported' || status === 415) return new AppError('unsupported_media_type');
  if (error.type === 'request.aborted') return new AppError('request_aborted');
  return new AppError('bad_request', error.expose && error.message ? { message: error.message } : {});
}

/** The catalogue error an exception answers as; null: a 500 `internal_error`. */
export function classify(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return new DependencyUnavailableError('database');
  if (isTemporalUnavailable(error)) return new DependencyUnavailableError('temporal');
  if (error && typeof error === 'object') return fromHttpError(error);
  return null;
}

/** The body an error answers with. */
export function errorBody(error: AppError): Record<string, unknown> {
  return { message: error.message, errorCode: error.errorCode, ...error.details };
}

/**
 * What an exception answers with: a catalogue error's status, headers and `{message, errorCode, ...}`,
 * or a 500 `internal_error` that shows no internals. Logs it as the answer needs (a dependency's
 * outage as a warning, anything unknown as an error).
 */
export function errorResponse(
  ctx: AppContext,
  error: unknown,
): { status: number; headers: Record<string, string>; body: { message: string; errorCode: string } & Record<string, unknown> } {
  const known = classify(error);
  if (known) {
    if (known.status >= 500) ctx.state.log.warn({ err: error }, `dependency unavailable: ${known.errorCode}`);
    return { status: known.status, headers: known.headers, body: errorBody(known) as { message: string; errorCode: string } };
  }
  ctx.state.log.error({ err: error }, 'unhandled error');
  return {
    status: 500,
    headers: {},
    body: {
      message: ERROR_CATALOGUE.internal_error.message,
      errorCode: 'internal_error' satisfies ErrorKey,
      requestId: ctx.state.requestId,
    },
  };
}

/** The one error middleware, registered first: every error leaves as `{message, errorCode, ...}`. */
export function errorHandler() {
  return async (ctx: AppContext, next: Next) => {
    try {
      await next();
    } catch (error) {
      const answer = errorResponse(ctx, error);
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}
