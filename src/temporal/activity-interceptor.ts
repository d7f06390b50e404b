import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { MEDIA_PHASE_OF_ACTIVITY, type ActivityMetrics } from '../metrics/activity-metrics.js';

/**
 * Watches the media pipeline's activities, around them rather than inside: each phase's run is
 * logged (through the activity's logger, so with its workflowId, runId and activityType) and timed
 * by phase; an ingestion that ends is counted: finalizeMedia that returns has published the
 * rendition, failMedia that returns has failed the ingestion with the errorCode it was given.
 */
export function mediaActivityObserver(metrics: ActivityMetrics | undefined): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const type = ctx.info.activityType;
        const phase = MEDIA_PHASE_OF_ACTIVITY[type];
        // Every other activity (the agent pipeline's, at high rates) passes straight through.
        if (!phase && type !== 'failMedia') return next(input);
        const started = performance.now();
        let outcome: 'completed' | 'failed' = 'failed';
        try {
          const result = await next(input);
          outcome = 'completed';
          if (type === 'finalizeMedia') metrics?.mediaEnded('ready', null);
          if (type === 'failMedia') {
            const errorCode = typeof input.args[1] === 'string' ? input.args[1] : null;
            metrics?.mediaEnded('failed', errorCode);
            ctx.log.warn('media ingestion failed', { errorCode });
          }
          return result;
        } finally {
          if (phase) {
            const seconds = (performance.now() - started) / 1000;
            metrics?.mediaPhase(phase, seconds, outcome);
            ctx.log.info(`media ${phase} ${outcome}`, { phase, outcome, seconds: Number(seconds.toFixed(3)), attempt: ctx.info.attempt });
          }
        }
      },
    },
  });
}
