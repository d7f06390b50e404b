/**
 * Captures the histories of coalesced session wakes (run once when they were introduced; the
 * older agent-session histories keep the shape from before, without `stored` in processing results):
 * `npx tsx test/replay/capture-session-wakes.ts`.
 *  - session-wakes/v1.json: the reconciler waking a session whose requested wake was never taken;
 *  - agent-session/stored-progress.json: a session with a gap, ended through it, whose processing
 *    results carry the stored status and highest sequence.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { saveHistory } from './save-history.js';
import { sql } from 'slonik';
import { sessionWorkflowSettings } from '../../src/agents/session-workflow.js';
import { agentSessionWorkflowId } from '../../src/temporal/ids.js';
import { sessionWakesWorkflowId } from '../../workflows/session-wakes/contract.js';
import { sessionWakesWorkflow } from '../../workflows/session-wakes/workflow.js';
import { assistantMessage, processingContext, sessionRequest, userMessage } from '../../harness/agents.js';
import { stopTestStack } from '../../harness/stack.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const ctx = await processingContext({ credits: 100 });
try {
  const client = ctx.api.temporal.client;
  const app = await ctx.newApp();
  const ingest = async (id: string, events: ReturnType<typeof userMessage>[], status: 'open' | 'ended' = 'open') => {
    const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: id, status }));
    if (res.status !== 202) throw new Error(`ingest failed: ${JSON.stringify(res.body)}`);
    return res.body.sessionId as string;
  };

  const gap = await ingest('stored-progress', [userMessage(1, 'q'), assistantMessage(2, 'a'), userMessage(4, 'after the gap')]);
  await ctx.processedThrough(gap, 2);
  await ingest('stored-progress', [assistantMessage(6, 'bye')], 'ended');
  const h = client.workflow.getHandle(agentSessionWorkflowId(gap));
  await h.result();
  await saveHistory('agent-session', 'stored-progress', h);

  // A stranded wake: stored work whose wake request is an hour old (its signal was lost).
  const stranded = await ingest('stranded', [userMessage(1, 'q')]);
  await ctx.processedThrough(stranded, 1);
  await ctx.pool.query(sql.unsafe`UPDATE agent_sessions SET wake_requested_at = now() - interval '1 hour' WHERE id = ${stranded}`);
  const wakes = await client.workflow.start(sessionWakesWorkflow, {
    workflowId: `${sessionWakesWorkflowId()}/replay-capture`,
    taskQueue: ctx.taskQueue,
    args: [{ version: 1, olderThanSeconds: 60, settings: sessionWorkflowSettings(ctx.api.deps.config) }],
  });
  const result = await wakes.result();
  if (result.wokenSessions !== 1) throw new Error(`expected one woken session, got ${JSON.stringify(result)}`);
  await saveHistory('session-wakes', 'v1', wakes);
} finally {
  await ctx.close();
  await stopTestStack();
}
