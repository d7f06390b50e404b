import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { Next } from 'koa';
import type { AppContext } from '../context.js';
import type { Logger } from '../../src/logger.js';

const SAFE_ID = /^[A-Za-z0-9._-]{8,128}$/;

/**
 * Every request gets an id (the caller's `X-Request-Id` when it is a sane token), echoed in the
 * response header and in every log line, and given in 500 bodies so that support can find the logs.
 */
export function requestId(logger: Logger) {
  return async (ctx: AppContext, next: Next) => {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    // With tracing on, the request's lines carry its trace id too (logs to traces and back).
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    ctx.state.log = logger.child(traceId ? { requestId: ctx.state.requestId, traceId } : { requestId: ctx.state.requestId });
    const started = performance.now();
    try {
      await next();
    } finally {
      // Only the route pattern and the path are logged: credentials travel in headers, never in URLs we log.
      ctx.state.log.info(
        {
          method: ctx.method,
          route: (ctx as { _matchedRoute?: string })._matchedRoute ?? null,
          status: ctx.respond === false ? ctx.res.statusCode : ctx.status,
          durationMs: Math.round(performance.now() - started),
          principal: ctx.state.principal ? { kind: ctx.state.principal.kind, organizationId: ctx.state.principal.organizationId } : null,
        },
        'request',
      );
    }
  };
}
