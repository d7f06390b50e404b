import { continueAsNew, patched, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { SessionDrainerActivities } from '../../activities/session-drainer.js';
import type { SessionDrainerInput } from './contract.js';

/** Calls per run before continuing as new. */
const CALLS_PER_RUN = 100;

/** Issue 34: the task queue's drainers are shards; the one drainer of before (no shard in its input) ends. */
const SHARDED_DRAINERS_PATCH = 'session-drainer-shards';

/** Decision 0211: the shards' drainers run on a task queue of their own; a shard's drainer of before, on the main queue, ends. */
const OWN_QUEUE_PATCH = 'session-drainer-own-queue';

/**
 * Keeps the drain activity running: a call runs for a minute (`runSeconds` of the drainer's settings,
 * src/agents/drainer.ts; not a setting), heartbeating, then returns and the next one starts. A worker that dies stops
 * heartbeating; the call is retried (on another worker) after the heartbeat timeout. Nothing is lost
 * meanwhile: the wakes wait in PostgreSQL. A call that yields (its worker holds more than its share of
 * the shards) is made again after a second, for a worker below its share to take.
 */
export async function sessionDrainerWorkflow(input: SessionDrainerInput): Promise<void> {
  const { drainSessionWakes } = proxyActivities<SessionDrainerActivities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
    // Every call goes through the task queue, to any worker's poller: eager dispatch would hand it
    // back to the worker that runs this workflow, the one a yielding call must leave.
    allowEagerDispatch: false,
  });
  for (let i = 0; i < CALLS_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
    // The shards drain every session now; histories from before keep their calls on replay.
    if (input.shards === undefined && patched(SHARDED_DRAINERS_PATCH)) return;
    // Its successor on the drainers' queue drains the shard now (started by every worker at start).
    if (input.shards !== undefined && !input.ownTaskQueue && patched(OWN_QUEUE_PATCH)) return;
    const result = await drainSessionWakes(input);
    if (result.yielded) await sleep('1 second');
  }
  await continueAsNew<typeof sessionDrainerWorkflow>(input);
}
