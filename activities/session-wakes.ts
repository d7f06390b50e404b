import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { wakeStrandedSessions } from '../src/agents/session-workflow.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import type { SessionWorkflowSettingsInput } from '../workflows/session-wakes/contract.js';

export function createSessionWakeActivities(deps: { pool: DatabasePool }) {
  return {
    /** One batch of the reconciler: wakes stranded sessions with the worker's own Temporal client. */
    async wakeStrandedSessions(
      settings: SessionWorkflowSettingsInput,
      olderThanSeconds: number,
      limit: number,
    ): Promise<{ stranded: number; woken: number }> {
      return wakeStrandedSessions(deps.pool, new TemporalGateway(Context.current().client), settings, { olderThanSeconds, limit });
    },
  };
}

export type SessionWakeActivities = ReturnType<typeof createSessionWakeActivities>;
