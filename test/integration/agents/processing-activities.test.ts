import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { analyseQueued, processPending } from '../../../src/agents/processing.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import { agentContext, assistantMessage, sessionRequest, userMessage, type AgentContext, type TestAgentApp } from '../../helpers/agents.js';

/** The session workflow's activities on a real PostgreSQL, called as a retry would call them. */
describe('session processing activities: retries', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  before(async () => {
    t = await agentContext({ credits: 100 });
    app = await t.newApp();
  });
  after(async () => t?.close());

  const units = (sessionId: string) => t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM usage_records WHERE session_id = ${sessionId}`);

  it('a retried page whose first attempt committed continues from the stored watermark (no false gap)', async () => {
    const events = [1, 2, 3, 4, 5, 6].map((s) => (s % 2 ? userMessage(s, `q${s}`) : assistantMessage(s, `a${s}`)));
    const res = await t.ingest(app, sessionRequest(app, events, { externalSessionId: 'retry' }));
    const sessionId = res.body.sessionId as string;
    const stale = { processedThroughSequence: null, highestSequence: 6, terminal: false };
    const first = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([first.processedThroughSequence, first.waitingFor, first.more, first.processed, first.units], [4, null, true, 4, 2]);
    // The worker died before reporting: the workflow retries with the snapshot it had.
    const retry = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([retry.processedThroughSequence, retry.waitingFor, retry.processed, retry.units], [6, null, 2, 1]);
    const again = await processPending(t.pool, sessionId, stale, 4);
    assert.deepEqual([again.processedThroughSequence, again.processed, again.units], [6, 0, 0]);
    assert.equal(await units(sessionId), 3, 'one unit per final response, none twice');
  });

  it('a retried analysis batch pays and writes once', async () => {
    const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'the export is broken'), assistantMessage(2, 'a')], { externalSessionId: 'pay-once', status: 'ended' }));
    const sessionId = res.body.sessionId as string;
    await processPending(t.pool, sessionId, { processedThroughSequence: null, highestSequence: 2, terminal: true }, 10);
    const o = { extractor: new LocalSignalExtractor(), creditCost: 1, limit: 20, concurrency: 2 };
    const [a, b] = await Promise.all([analyseQueued(t.pool, sessionId, o), analyseQueued(t.pool, sessionId, o)]);
    assert.equal(a.analysed + b.analysed, 1, 'two concurrent attempts: one writes');
    const debits = await t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM credit_transactions WHERE organization_id = ${t.org.organizationId} AND amount < 0`);
    assert.equal(debits, 1);
    const c = await analyseQueued(t.pool, sessionId, o);
    assert.deepEqual([c.analysed, c.remaining, c.billingBlocked, c.providerUnavailable], [0, 0, false, false]);
  });
});
