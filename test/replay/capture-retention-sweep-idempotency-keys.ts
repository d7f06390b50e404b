/**
 * Captures the retention sweep since it also purges idempotency keys past 24 hours
 * (PURGE_IDEMPOTENCY_KEYS_PATCH; run once when it was introduced, retention-sweep/v2.json keeps the
 * sweep from before): `npx tsx test/replay/capture-retention-sweep-idempotency-keys.ts`.
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
  // A key past its 24 hours to purge, and a young one to keep.
  await ctx.pool.query(sql.unsafe`
    INSERT INTO idempotency_keys (organization_id, credential, idempotency_key, request_hash, state, claim, response_status, created_at)
    VALUES (${ctx.org.organizationId}, 'apiKey:capture', 'capture-old', decode('00', 'hex'), 'completed', gen_random_uuid(), 201, now() - interval '25 hours'),
           (${ctx.org.organizationId}, 'apiKey:capture', 'capture-young', decode('00', 'hex'), 'completed', gen_random_uuid(), 201, now())`);
  const sweep = await ctx.api.temporal.client.workflow.start(retentionSweepWorkflow, {
    workflowId: `${retentionSweepWorkflowId()}/replay-capture-idempotency-keys`,
    taskQueue: ctx.taskQueue,
    args: [{ version: 1 }],
  });
  const result = await sweep.result();
  if (result.purgedIdempotencyKeys !== 1) throw new Error(`expected one purged key, got ${JSON.stringify(result)}`);
  await saveHistory('retention-sweep', 'idempotency-keys', sweep);
} finally {
  await ctx.close();
  await stopTestStack();
}
