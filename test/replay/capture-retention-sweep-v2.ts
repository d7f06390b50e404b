/**
 * Captures the retention sweep since it also purges the MCP authorization server's expired rows
 * (PURGE_AUTHORIZATIONS_PATCH; run once when it was introduced, retention-sweep/v1.json keeps the
 * sweep from before): `npx tsx test/replay/capture-retention-sweep-v2.ts`.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { saveHistory } from './save-history.js';
import { sql } from 'slonik';
import { retentionSweepWorkflowId } from '../../src/temporal/ids.js';
import { retentionSweepWorkflow } from '../../workflows/retention-sweep/workflow.js';
import { processingContext } from '../../harness/agents.js';
import { stopTestStack } from '../../harness/stack.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const ctx = await processingContext({ credits: 100 });
try {
  // An expired access token to purge, and a live one to keep.
  await ctx.pool.query(sql.unsafe`
    INSERT INTO oauth_models (model, id, payload, expires_at)
    VALUES ('AccessToken', 'capture-expired', '{}'::jsonb, now() - interval '1 minute'), ('AccessToken', 'capture-live', '{}'::jsonb, now() + interval '1 hour')`);
  const sweep = await ctx.api.temporal.client.workflow.start(retentionSweepWorkflow, {
    workflowId: `${retentionSweepWorkflowId()}/replay-capture-v2`,
    taskQueue: ctx.taskQueue,
    args: [{ version: 1 }],
  });
  const result = await sweep.result();
  if (result.purgedAuthorizations !== 1) throw new Error(`expected one purged row, got ${JSON.stringify(result)}`);
  await saveHistory('retention-sweep', 'v2', sweep);
} finally {
  await ctx.close();
  await stopTestStack();
}
