import type { Next } from 'koa';
import type { ApiMetrics } from '../../src/metrics/api-metrics.js';
import type { AppContext } from '../context.js';
import { TUS_PATH } from '../recordings/uploads/tus.js';

/** The route template a request matched (`unmatched` for none): a label with few values. */
function routeOf(ctx: AppContext): string {
  const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
  if (matched) return matched;
  return ctx.path.startsWith(`${TUS_PATH}/`) ? `${TUS_PATH}/:upload` : 'unmatched';
}

/**
 * Every request's duration by method, route and status (after the error middleware chose it), and
 * rate-limit refusals by route.
 */
export function httpMetrics(metrics: ApiMetrics) {
  return async (ctx: AppContext, next: Next) => {
    const end = metrics.httpRequestDuration.startTimer();
    try {
      await next();
    } finally {
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      const route = routeOf(ctx);
      end({ method: ctx.method, route, status: String(status) });
      if (status === 429) metrics.rateLimitRejections.inc({ limit: route });
    }
  };
}
