import type { Client } from '@temporalio/client';
import { TemporalGateway } from '../temporal/gateway.js';
import { SESSION_DRAINER_WORKFLOW, sessionDrainerWorkflowId, type SessionDrainerInput } from '../../workflows/session-drainer/contract.js';

/**
 * The gateway of `agent-session-drainer/<taskQueue>`. Starts the task queue's session drainer, or
 * leaves the running one alone (every worker calls this at start, with its admin client; the
 * drainer's settings are read from the worker that runs each activity call).
 */
export async function ensureSessionDrainer(client: Client, taskQueue: string): Promise<void> {
  const input: SessionDrainerInput = {};
  await TemporalGateway.of(client).run('startup', (c) =>
    c.workflow.start(SESSION_DRAINER_WORKFLOW, {
      workflowId: sessionDrainerWorkflowId(taskQueue),
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  );
}
