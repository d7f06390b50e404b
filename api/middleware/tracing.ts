import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Next } from 'koa';
import type { AppContext } from '../context.js';

/**
 * A server span per request (installed only with tracing on), continuing the caller's W3C
 * `traceparent` when it sends one, named `<METHOD> <route pattern>` with the HTTP semantic
 * conventions' attributes; 5xx answers mark it failed. Everything the request does (the workflows it
 * starts or signals, an ingest's stored wake) runs inside it. Written here rather than taken from
 * `@opentelemetry/instrumentation-http`/`-koa`: those patch modules through require hooks, which
 * need a loader flag for this ES-module code, and would also trace every outbound call.
 */
export function httpTracing() {
  const tracer = trace.getTracer('intake-api');
  return async (ctx: AppContext, next: Next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
    const span = tracer.startSpan(
      ctx.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': ctx.method,
          'url.path': ctx.path,
          'url.scheme': ctx.protocol,
          'user_agent.original': ctx.get('user-agent'),
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (ctx.state.requestId) span.setAttribute('intake.request_id', ctx.state.requestId);
      span.end();
    }
  };
}
