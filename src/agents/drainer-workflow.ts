import type { Client } from '@temporalio/client';
import { SESSION_DRAINER_WORKFLOW, sessionDrainerWorkflowId, type SessionDrainerInput } from '../../workflows/session-drainer/contract.js';

/**
 * Starts the task queue's session drainer, or leaves the running one alone (every worker calls this
 * at start; the drainer's settings are read from the worker that runs each activity call).
 */
export async function ensureSessionDrainer(client: Client, taskQueue: string): Promise<void> {
  const input: SessionDrainerInput = { version: 1 };
  await client.workflow.start(SESSION_DRAINER_WORKFLOW, {
    workflowId: sessionDrainerWorkflowId(taskQueue),
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
