/**
 * Captures the session drainer's histories: `npx tsx test/replay/capture-session-drainer.ts`.
 *  - session-drainer/v1.json (captured when the drainer was introduced, by this script's first
 *    version): the task queue's one drainer (no shard in its input), its first calls of its activity
 *    (one second each), one of which processed an ingest.
 *  - session-drainer/v2.json (issue 34, captured by this script's second version): a shard's drainer
 *    on the main queue whose first call yields (its worker held its share already), waits a second,
 *    and calls again; a later call processes an ingest.
 *  - session-drainer/v3.json (decision 0211): the same on the drainers' own queue.
 *  - session-drainer/v3-main-queue-ends.json (decision 0211): a shard's drainer of before, on the
 *    main queue, that a worker of today runs: it ends itself (the patch's marker).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { drainerSettings } from '../../src/agents/drainer.js';
import { DrainerShardHost } from '../../src/agents/drainer-shards.js';
import {
  mainQueueSessionDrainerWorkflowId,
  SESSION_DRAINER_WORKFLOW,
  sessionDrainerWorkflowId,
} from '../../workflows/session-drainer/contract.js';
import { assistantMessage, processingContext, sessionRequest, userMessage } from '../../harness/agents.js';
import { createTestDatabase, stopTestStack } from '../../harness/stack.js';
import { createDatabasePool } from '../../src/db/pool.js';
import { testConfig } from '../../harness/config.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const hostPool = await createDatabasePool(await createTestDatabase());
const host = new DrainerShardHost({ pool: hostPool, taskQueue: 'capture', worker: 'capture', shards: 1, lanes: 2 });
await host.start();
// A run already held: the drainer's first call is beyond the share of one and yields.
const earlier = host.enter();
const ctx = await processingContext({
  credits: 100,
  deps: { drainer: { ...drainerSettings(testConfig()), runSeconds: 1 }, drainerShards: host },
});
try {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  earlier.leave();
  const app = await ctx.newApp();
  const res = await ctx.ingest(app, sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'drained' }));
  await ctx.processedThrough(res.body.sessionId as string, 2);
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  const handle = ctx.api.temporal.client.workflow.getHandle(sessionDrainerWorkflowId(ctx.taskQueue, 0, 1));
  await saveHistory('session-drainer', 'v3', handle);
  await handle.terminate('captured');
  const before = await ctx.api.temporal.client.workflow.start(SESSION_DRAINER_WORKFLOW, {
    workflowId: mainQueueSessionDrainerWorkflowId(ctx.taskQueue, 0, 1),
    taskQueue: ctx.taskQueue,
    args: [{ shard: 0, shards: 1 }],
  });
  await before.result();
  await saveHistory('session-drainer', 'v3-main-queue-ends', before);
} finally {
  await ctx.close();
  await host.stop();
  await hostPool.end();
  await stopTestStack();
}
