import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { addCredits } from '../../../src/db/repositories/organizations.js';
import { agentSessionWorkflowId } from '../../../src/temporal/ids.js';
import { PROCESSING_STATUS } from '../../../src/temporal/search-attributes.js';
import { sessionQuery } from '../../../workflows/agent-session/contract.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { runIntake } from '../../helpers/cli.js';
import { TEST_OPERATOR_TOKEN } from '../../../harness/config.js';
import { testStack } from '../../../harness/stack.js';
import { eventually } from '../../../harness/wait.js';
import { testActivityMetrics } from '../../helpers/metrics.js';

const conversation = (responses: number) =>
  Array.from({ length: responses }, (_, i) => [
    userMessage(2 * i + 1, `question ${i}: the export is broken again`),
    assistantMessage(2 * i + 2, `answer ${i}`),
  ]).flat();

const balance = (ctx: ProcessingContext) =>
  ctx.pool.oneFirst(sql.type(z.object({ credit_balance: z.number() }))`
  SELECT credit_balance FROM organizations WHERE id = ${ctx.org.organizationId}`);

/** Analysis spends credits; without them it is billing-blocked, explicit feedback still flows, and it resumes on a top-up. */
describe('agent session workflow: credits and billing_blocked', function () {
  this.timeout(120_000);

  describe('a running workflow', () => {
    let ctx: ProcessingContext;
    let app: TestAgentApp;
    const counted = testActivityMetrics();
    before(async () => {
      ctx = await processingContext({ credits: 2, deps: { metrics: counted.metrics } });
      app = await ctx.newApp();
    });
    after(async () => ctx?.close());

    it('analyses while credits last, then blocks; feedback signals still flow; each top-up resumes it', async () => {
      const first = await ctx.ingest(app, sessionRequest(app, conversation(4), { externalSessionId: 'billing' }));
      assert.equal(first.status, 202);
      const sessionId = first.body.sessionId as string;
      const blocked = await eventually(
        async () => ({ o: await ctx.outcome(sessionId), s: await ctx.session(sessionId) }),
        (x) => x.o.done === 2 && x.s.processing_status === 'billing_blocked',
      );
      assert.deepEqual({ done: blocked.o.done, queued: blocked.o.queued, units: blocked.o.units }, { done: 2, queued: 2, units: 4 });
      assert.equal(await balance(ctx), 0);
      // The worker's counters: two analysed, and at least one round held for credits.
      assert.equal(await counted.value('intake_agent_analyses_total', { outcome: 'analysed' }), 2);
      assert.ok((await counted.value('intake_agent_analysis_rounds_held_total', { reason: 'billing_blocked' })) >= 1);
      const handle = ctx.api.temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId));
      assert.equal(
        (
          await eventually(
            () => handle.query(sessionQuery),
            (v) => v.processingStatus === 'billing_blocked',
          )
        ).processingStatus,
        'billing_blocked',
      );
      assert.equal(
        (
          await eventually(
            () => handle.describe(),
            (d) => d.typedSearchAttributes.get(PROCESSING_STATUS) === 'billing_blocked',
          )
        ).typedSearchAttributes.get(PROCESSING_STATUS),
        'billing_blocked',
      );

      // Explicit feedback needs no credits: it is processed while analysis is blocked.
      const fb = await ctx.ingest(app, sessionRequest(app, [feedbackEvent(9, 'e2', 'negative')], { externalSessionId: 'billing' }));
      assert.equal(fb.body.processingStatus, 'billing_blocked', 'the ingest response says so too');
      await eventually(
        () => ctx.outcome(sessionId),
        (o) => o.explicit === 1,
      );
      assert.equal((await ctx.outcome(sessionId)).explicit, 1);
      assert.equal((await ctx.outcome(sessionId)).done, 2);

      // A top-up nobody announces: the blocked workflow re-checks the balance by itself.
      await ctx.pool.transaction((tx) => addCredits(tx, ctx.org.organizationId, 1, 'test'));
      await eventually(
        () => ctx.outcome(sessionId),
        (o) => o.done === 3,
      );
      assert.equal((await ctx.outcome(sessionId)).done, 3);
      assert.equal(await balance(ctx), 0);

      // The operator's top-up over HTTP wakes it at once.
      const topUp = await ctx.api.request(`/v3/operator/organizations/${ctx.org.organizationId}/credits`, {
        method: 'POST',
        headers: { 'X-Operator-Token': TEST_OPERATOR_TOKEN },
        json: { amount: 5 },
      });
      assert.equal(topUp.status, 200);
      assert.equal(topUp.body.balance, 5);
      assert.equal(topUp.body.resumedSessions, 1);
      const s = await ctx.processedThrough(sessionId, 9);
      assert.equal(s.processing_status, 'pending');
      assert.deepEqual(await ctx.outcome(sessionId), {
        units: 4,
        explicit: 1,
        inferred: (await ctx.outcome(sessionId)).inferred,
        queued: 0,
        done: 4,
      });
      assert.equal(await balance(ctx), 4);
      const ledger = await ctx.pool.anyFirst(sql.type(z.object({ amount: z.number() }))`
        SELECT amount FROM credit_transactions WHERE organization_id = ${ctx.org.organizationId} ORDER BY id`);
      assert.deepEqual(ledger, [2, -1, -1, 1, -1, 5, -1], 'every spend is one ledger line: nothing paid twice');
    });
  });

  describe('a workflow that closed while blocked', () => {
    let ctx: ProcessingContext;
    let app: TestAgentApp;
    before(async () => {
      ctx = await processingContext({ credits: 0, env: { AGENT_SESSION_IDLE_SECONDS: '2' } });
      app = await ctx.newApp();
    });
    after(async () => ctx?.close());

    it('is restarted by `intake credits add`, which runs the queued analyses', async () => {
      const res = await ctx.ingest(app, sessionRequest(app, conversation(2), { externalSessionId: 'closed' }));
      assert.equal(res.body.processingStatus, 'billing_blocked');
      const sessionId = res.body.sessionId as string;
      const handle = ctx.api.temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId));
      // The drainer hands the waiting analyses to the session's workflow (it starts it).
      await eventually(
        () => handle.describe(),
        () => true,
      );
      assert.equal(await handle.result(), 'idle', 'the blocked run closes when idle');
      assert.deepEqual(await ctx.outcome(sessionId), { units: 2, explicit: 0, inferred: 0, queued: 2, done: 0 });
      const { temporal } = await testStack();
      const cli = await runIntake(
        {
          DATABASE_URL: ctx.databaseUrl,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_TASK_QUEUE: ctx.worker.taskQueue,
          DATA_DIR: '/nonexistent',
        },
        'credits',
        'add',
        '--org',
        ctx.org.organizationId,
        '--amount',
        '3',
      );
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(cli.json, { organizationId: ctx.org.organizationId, balance: 3, resumedSessions: 1 });
      await ctx.processedThrough(sessionId, 4);
      assert.equal((await ctx.outcome(sessionId)).done, 2);
      assert.equal((await ctx.session(sessionId)).processing_status, 'pending');
    });
  });

  describe('an analysis that costs more than one credit', () => {
    let ctx: ProcessingContext;
    let app: TestAgentApp;
    before(async () => {
      ctx = await processingContext({ credits: 2, env: { AGENT_ANALYSIS_CREDIT_COST: '3' } });
      app = await ctx.newApp();
    });
    after(async () => ctx?.close());

    it('is blocked while the balance is below its cost, in the ingest response too', async () => {
      const res = await ctx.ingest(app, sessionRequest(app, conversation(1), { externalSessionId: 'dear' }));
      assert.equal(res.body.processingStatus, 'billing_blocked', 'a balance of 2 cannot pay 3');
      const sessionId = res.body.sessionId as string;
      await eventually(
        () => ctx.outcome(sessionId),
        (o) => o.units === 1,
      );
      assert.deepEqual([(await ctx.outcome(sessionId)).done, (await ctx.session(sessionId)).processing_status], [0, 'billing_blocked']);
      await ctx.pool.transaction((tx) => addCredits(tx, ctx.org.organizationId, 1, 'test'));
      await ctx.processedThrough(sessionId, 2);
      assert.equal(await balance(ctx), 0);
      assert.equal((await ctx.session(sessionId)).processing_status, 'pending');
    });
  });
});
