import type { Client } from '@temporalio/client';
import { TemporalGateway } from '../temporal/gateway.js';
import {
  SESSION_DRAINER_WORKFLOW,
  sessionDrainerTaskQueue,
  sessionDrainerWorkflowId,
  type SessionDrainerInput,
} from '../../workflows/session-drainer/contract.js';

/**
 * The gateway of the session drainers, `agent-session-drainer/<taskQueue>-drainers/<i>-of-<shards>`
 * on the drainers' own queue (`<taskQueue>-drainers`, decision 0211). Starts the task queue's
 * drainer shards, or leaves the running ones alone (every worker calls this at start, with its
 * admin client; the drainers' settings are read from the worker that runs each activity call). The
 * drainers of before end themselves: issue 34's one drainer (`agent-session-drainer/<taskQueue>`)
 * and the shards on the main queue (`agent-session-drainer/<taskQueue>/<i>-of-<shards>`).
 */
export async function ensureSessionDrainers(client: Client, taskQueue: string, shards: number): Promise<void> {
  const gateway = TemporalGateway.of(client);
  await Promise.all(
    Array.from({ length: shards }, (_, shard) => {
      const input: SessionDrainerInput = { shard, shards, ownTaskQueue: true };
      return gateway.run('startup', (c) =>
        c.workflow.start(SESSION_DRAINER_WORKFLOW, {
          workflowId: sessionDrainerWorkflowId(taskQueue, shard, shards),
          taskQueue: sessionDrainerTaskQueue(taskQueue),
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      );
    }),
  );
}
