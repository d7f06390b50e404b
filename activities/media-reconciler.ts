import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { reconcileMediaIngestions } from '../src/recordings/media.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import type { MediaWorkflowSettingsInput } from '../workflows/media-reconciler/contract.js';

export function createMediaReconcilerActivities(deps: { pool: DatabasePool }) {
  return {
    /** One batch of the reconciler, with the worker's own Temporal client. */
    async reconcileMediaIngestions(settings: MediaWorkflowSettingsInput, olderThanSeconds: number, limit: number, after: string | null) {
      return reconcileMediaIngestions(deps.pool, new TemporalGateway(Context.current().client), settings, {
        olderThanSeconds,
        limit,
        after,
      });
    },
  };
}

export type MediaReconcilerActivities = ReturnType<typeof createMediaReconcilerActivities>;
