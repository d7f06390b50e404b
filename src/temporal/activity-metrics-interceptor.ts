import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { MEDIA_PHASE_OF_ACTIVITY, type ActivityMetrics } from '../metrics/activity-metrics.js';

/**
 * Times the media pipeline's activities by phase and counts ingestions as they end, around the
 * activities rather than inside them: finalizeMedia that returns has published the rendition, and
 * failMedia that returns has failed the ingestion with the errorCode it was given.
 */
export function activityMetricsInterceptor(metrics: ActivityMetrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const type = ctx.info.activityType;
        const phase = MEDIA_PHASE_OF_ACTIVITY[type];
        const started = performance.now();
        let outcome: 'completed' | 'failed' = 'failed';
        try {
          const result = await next(input);
          outcome = 'completed';
          if (type === 'finalizeMedia') metrics.mediaEnded('ready', null);
          if (type === 'failMedia') metrics.mediaEnded('failed', typeof input.args[1] === 'string' ? input.args[1] : null);
          return result;
        } finally {
          if (phase) metrics.mediaPhase(phase, (performance.now() - started) / 1000, outcome);
        }
      },
    },
  });
}
