/**
 * Captures the session drainer's history (run once when it was introduced):
 * `npx tsx test/replay/capture-session-drainer.ts`.
 *  - session-drainer/v1.json: the drainer workflow's first calls of its activity (one second each
 *    here), one of which processed an ingest.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { drainerSettings } from '../../src/agents/drainer.js';
import { sessionDrainerWorkflowId } from '../../workflows/session-drainer/contract.js';
import { assistantMessage, processingContext, sessionRequest, userMessage } from '../../harness/agents.js';
import { stopTestStack } from '../../harness/stack.js';
import { testConfig } from '../../harness/config.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const ctx = await processingContext({ credits: 100, deps: { drainer: { ...drainerSettings(testConfig()), runSeconds: 1 } } });
try {
  const app = await ctx.newApp();
  const res = await ctx.ingest(app, sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'drained' }));
  await ctx.processedThrough(res.body.sessionId as string, 2);
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  const handle = ctx.api.temporal.client.workflow.getHandle(sessionDrainerWorkflowId(ctx.taskQueue));
  await saveHistory('session-drainer', 'v1', handle);
  await handle.terminate('captured');
} finally {
  await ctx.close();
  await stopTestStack();
}
