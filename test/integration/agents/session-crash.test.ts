import { drainerSettings } from '../../../src/agents/drainer.js';
import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { sql } from 'slonik';
import { z } from 'zod';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { waitFor } from '../../../harness/wait.js';
import { killWorkerProcess, startTestWorker, startWorkerProcess, type TestWorker } from '../../../harness/worker.js';

const SESSIONS = 24;
const TURNS = 60;

/** A conversation of TURNS exchanges: question, final answer, and a rating on every third answer. */
function conversation(): ReturnType<typeof userMessage>[] {
  const events = [];
  let seq = 1;
  for (let t = 0; t < TURNS; t++) {
    events.push(
      userMessage(seq++, `question ${t % 7}: the ${['export', 'import', 'billing'][t % 3]} page is broken, can you add a retry?`),
    );
    const answer = seq++;
    events.push(assistantMessage(answer, `answer ${t}`));
    if (t % 3 === 0) events.push(feedbackEvent(seq++, `e${answer}`, t % 2 ? 'negative' : 'positive'));
  }
  return events;
}

/** Killing the worker mid-batch loses nothing and double-counts nothing. */
describe('agent session workflow: a worker killed mid-batch', function () {
  this.timeout(240_000);
  let ctx: ProcessingContext & { taskQueue: string };
  let child: ChildProcess | undefined;
  let replacement: TestWorker | undefined;

  before(async () => {
    ctx = await processingContext({ credits: 1_000_000, worker: false });
  });
  after(async () => {
    if (child) await killWorkerProcess(child);
    await replacement?.stop();
    await ctx?.close();
  });

  const ingestAll = async (app: TestAgentApp) => {
    const ids: string[] = [];
    const events = conversation();
    for (let s = 0; s < SESSIONS; s++) {
      const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: `s${s}`, status: 'ended' }));
      assert.equal(res.status, 202);
      ids.push(res.body.sessionId);
    }
    return { ids, last: events.at(-1)!.sequence };
  };
  const fingerprint = (sessionIds: string[]) =>
    ctx.pool.anyFirst(sql.type(z.object({ f: z.string() }))`
    SELECT concat_ws('|', g.source, g.kind, g.rating, g.event_external_id, array_to_string(g.labels, ','), g.summary, g.comment) AS f
    FROM agent_signals g JOIN agent_sessions s ON s.id = g.session_id
    WHERE g.session_id = ANY(${sql.array(sessionIds, 'uuid')}) ORDER BY s.external_session_id, f`);
  const totals = (sessionIds: string[]) =>
    ctx.pool.one(sql.type(z.object({ units: z.number(), done: z.number(), debits: z.number(), watermarks: z.number() }))`
    SELECT (SELECT count(*)::int FROM usage_records WHERE session_id = ANY(${sql.array(sessionIds, 'uuid')})) AS units,
      (SELECT count(*)::int FROM agent_analysis_jobs WHERE session_id = ANY(${sql.array(sessionIds, 'uuid')}) AND status = 'done') AS done,
      (SELECT count(*)::int FROM credit_transactions WHERE organization_id = ${ctx.org.organizationId} AND amount < 0) AS debits,
      (SELECT coalesce(sum(processed_through_sequence), 0)::int FROM agent_sessions WHERE id = ANY(${sql.array(sessionIds, 'uuid')})) AS watermarks`);

  it("a new worker finishes the work; units, signals and credits equal a clean run's", async () => {
    child = await startWorkerProcess({
      databaseUrl: ctx.databaseUrl,
      taskQueue: ctx.taskQueue,
      drainer: drainerSettings(ctx.api.deps.config),
    });
    const crashed = await ingestAll(await ctx.newApp());
    const target = crashed.last * SESSIONS;
    // Kill while processing is under way: some progress, not all of it.
    const midway = await waitFor(
      async () => {
        const t = await totals(crashed.ids);
        return t.watermarks > 0 || t.done > 0;
      },
      60_000,
      20,
    );
    assert.ok(midway, 'processing started');
    await killWorkerProcess(child);
    child = undefined;
    const atKill = await totals(crashed.ids);
    assert.ok(atKill.watermarks < target || atKill.done < SESSIONS * TURNS, `killed before the end: ${JSON.stringify(atKill)}`);

    replacement = await startTestWorker(ctx.pool, { taskQueue: ctx.taskQueue });
    for (const id of crashed.ids) await ctx.processedThrough(id, crashed.last, 120_000);

    const clean = await ingestAll(await ctx.newApp());
    for (const id of clean.ids) await ctx.processedThrough(id, clean.last, 120_000);

    const a = await totals(crashed.ids);
    const b = await totals(clean.ids);
    assert.equal(a.units, SESSIONS * TURNS, 'one unit per final response');
    assert.deepEqual([a.units, a.done, a.watermarks], [b.units, b.done, b.watermarks]);
    assert.equal(b.debits, 2 * SESSIONS * TURNS, 'one debit per analysed response, in both runs together');
    const [fa, fb] = [await fingerprint(crashed.ids), await fingerprint(clean.ids)];
    assert.equal(fa.length, fb.length);
    assert.deepEqual(fa, fb, 'the same signals, none twice');
  });
});
