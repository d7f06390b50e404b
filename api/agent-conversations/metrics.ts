import type { Next } from 'koa';
import { AppError } from '../../src/errors.js';
import type { ApiMetrics } from '../../src/metrics/api-metrics.js';
import type { AppContext } from '../context.js';

/**
 * Counts the events of an ingest request that was refused (4xx), by its errorCode: a refusal after
 * the body was read counts its events; one before (a bad secret, a rate limit) counts none.
 */
export function countRejectedEvents(metrics: ApiMetrics) {
  return async (ctx: AppContext, next: Next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof AppError && error.status < 500) {
        const events = (ctx.request.body as { events?: unknown } | undefined)?.events;
        if (Array.isArray(events) && events.length) metrics.agentEventsRejected.inc({ reason: error.errorCode }, events.length);
      }
      throw error;
    }
  };
}
