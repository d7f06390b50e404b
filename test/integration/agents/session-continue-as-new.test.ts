import { strict as assert } from 'node:assert';
import { agentSessionWorkflowId } from '../../../src/temporal/ids.js';
import { sessionQuery } from '../../../workflows/agent-session/contract.js';
import { assistantMessage, processingContext, sessionRequest, userMessage, type ProcessingContext } from '../../../harness/agents.js';
import { eventually } from '../../../harness/wait.js';

/** A long session continues as new before its history grows large, carrying its state. */
describe('agent session workflow: continue-as-new', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  before(async () => {
    ctx = await processingContext({ env: { AGENT_SESSION_HISTORY_LIMIT: '100' } });
  });
  after(async () => ctx?.close());

  it('continues as new past the history limit and keeps processing in order', async () => {
    const app = await ctx.newApp();
    let sessionId = '';
    const ingests = 30;
    for (let i = 0; i < ingests; i++) {
      const res = await ctx.ingest(
        app,
        sessionRequest(app, [userMessage(2 * i + 1, `q${i}`), assistantMessage(2 * i + 2, `a${i}`)], { externalSessionId: 'long' }),
      );
      assert.equal(res.status, 202);
      sessionId = res.body.sessionId;
      await ctx.processedThrough(sessionId, 2 * i + 2);
    }
    const client = ctx.api.temporal.client;
    const runs = [];
    for await (const w of client.workflow.list({ query: `WorkflowId = '${agentSessionWorkflowId(sessionId)}'` })) runs.push(w);
    assert.ok(runs.filter((r) => r.status.name === 'CONTINUED_AS_NEW').length >= 1, `runs: ${runs.map((r) => r.status.name).join(',')}`);
    assert.equal(runs.filter((r) => r.status.name === 'RUNNING').length, 1);
    for (const r of runs) assert.ok((r.historyLength ?? 0) <= 160, `a run's history stays bounded: ${r.historyLength}`);
    const view = await eventually(
      () => client.workflow.getHandle(agentSessionWorkflowId(sessionId)).query(sessionQuery),
      (v) => v.processedThroughSequence === 2 * ingests,
    );
    assert.equal(view.processedThroughSequence, 2 * ingests, 'the watermark is carried over');
    const outcome = await ctx.outcome(sessionId);
    assert.deepEqual([outcome.units, outcome.done, outcome.queued], [ingests, ingests, 0]);
  });
});
