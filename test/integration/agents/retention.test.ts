import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { changeApplication } from '../../../src/agents/applications.js';
import { ensureRetentionSchedule } from '../../../src/temporal/schedules.js';
import { RETENTION_SWEEP_WORKFLOW } from '../../../workflows/retention-sweep/contract.js';
import {
  assistantMessage,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { runIntake } from '../../helpers/cli.js';
import { quietLogger } from '../../../harness/stack.js';
import { eventually } from '../../../harness/wait.js';

/** The retention sweep: a Temporal Schedule (and `intake retention sweep`) deletes conversations past their retention. */
describe('agent conversation retention', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  let app: TestAgentApp;
  let keep: TestAgentApp;
  const scheduleId = `retention-test-${randomUUID()}`;

  /** Rows of the MCP authorization server (oauth_models), expired `secondsAgo` ago or (negative) expiring later. */
  const authorizationRows = async (prefix: string, n: number, secondsAgo: number) => {
    for (let i = 0; i < n; i++) {
      await ctx.pool.query(sql.unsafe`
        INSERT INTO oauth_models (model, id, payload, expires_at)
        VALUES ('AccessToken', ${`${prefix}-${i}`}, '{}'::jsonb, now() - make_interval(secs => ${secondsAgo}))`);
    }
  };
  const authorizationRowsLeft = (prefix: string) =>
    ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM oauth_models WHERE id LIKE ${`${prefix}-%`}`);
  const exists = async (sessionId: string) =>
    (await ctx.pool.maybeOne(sql.unsafe`SELECT id FROM agent_sessions WHERE id = ${sessionId}`)) !== null;
  /** A processed conversation whose last activity was `daysAgo` days ago. */
  const conversation = async (owner: TestAgentApp, name: string, daysAgo: number) => {
    const res = await ctx.ingest(
      owner,
      sessionRequest(owner, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: name, status: 'ended' }),
    );
    const id = res.body.sessionId as string;
    await ctx.processedThrough(id, 2);
    await ctx.pool.query(sql.unsafe`UPDATE agent_sessions SET last_ingest_at = now() - make_interval(days => ${daysAgo}) WHERE id = ${id}`);
    return id;
  };

  before(async () => {
    ctx = await processingContext();
    app = await ctx.newApp({ retentionDays: 30 });
    keep = await ctx.newApp();
  });
  after(async () => {
    await ctx?.api.temporal.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
    await ctx?.close();
  });

  it("the schedule deletes conversations older than their application's retention; usage outlives them", async () => {
    const old = await conversation(app, 'old', 40);
    const recent = await conversation(app, 'recent', 10);
    const noLimit = await conversation(keep, 'ancient', 4000);
    await authorizationRows('expired', 3, 60);
    await authorizationRows('live', 2, -600);
    const client = ctx.api.temporal.client;
    await ensureRetentionSchedule(client, { taskQueue: ctx.worker.taskQueue, everyMinutes: 60, scheduleId }, quietLogger);
    // Idempotent: a second start of a worker updates the schedule instead of failing.
    await ensureRetentionSchedule(client, { taskQueue: ctx.worker.taskQueue, everyMinutes: 30, scheduleId }, quietLogger);
    const described = await client.schedule.getHandle(scheduleId).describe();
    assert.equal(described.spec.intervals?.[0]?.every, 30 * 60 * 1000);
    await client.schedule.getHandle(scheduleId).trigger();
    assert.equal(
      await eventually(
        () => exists(old),
        (e) => !e,
      ),
      false,
      'the expired conversation is deleted',
    );
    assert.equal(await exists(recent), true);
    assert.equal(await exists(noLimit), true, 'no retention setting: kept');
    const events = await ctx.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM agent_events WHERE session_id = ${old}`,
    );
    assert.equal(events, 0, 'its events went with it');
    const usage = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM usage_records WHERE organization_id = ${ctx.org.organizationId} AND session_id IS NULL`);
    assert.equal(usage, 1, 'the metered unit stays, detached');
    const runs = await eventually(
      async () => {
        const found = [];
        for await (const w of client.workflow.list({
          query: `WorkflowType = 'retentionSweepWorkflow' AND TaskQueue = '${ctx.worker.taskQueue}'`,
        }))
          found.push(w);
        return found;
      },
      (f) => f.some((w) => w.status.name === 'COMPLETED'),
    );
    const result = await client.workflow.getHandle(runs[0]!.workflowId, runs[0]!.runId).result();
    assert.deepEqual(result, { deletedSessions: 1, purgedAuthorizations: 3 });
    assert.equal(await authorizationRowsLeft('expired'), 0, "the authorization server's expired rows are purged");
    assert.equal(await authorizationRowsLeft('live'), 2);
  });

  it('reducing retention deletes older conversations on the next sweep (`intake retention sweep`)', async () => {
    const recent = await conversation(app, 'recent-2', 10);
    const fresh = await conversation(app, 'fresh', 0);
    await changeApplication(ctx.pool, ctx.org.organizationId, app.app.id, { retentionDays: 5 });
    const cli = await runIntake(
      { DATABASE_URL: ctx.databaseUrl, DATA_DIR: '/nonexistent' },
      'retention',
      'sweep',
      '--org',
      ctx.org.organizationId,
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.json.deletedSessions, 2, 'recent (10 days) and recent-2 (10 days) are past 5 days now');
    assert.equal(await exists(recent), false);
    assert.equal(await exists(fresh), true);
    assert.equal(cli.json.purgedAuthorizations, undefined, "one organization's sweep leaves the shared rows");
    await authorizationRows('expired-cli', 2, 1);
    const whole = await runIntake({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: '/nonexistent' }, 'retention', 'sweep');
    assert.equal(whole.code, 0, whole.stderr);
    assert.deepEqual(whole.json, { deletedSessions: 0, purgedAuthorizations: 2 });
    const bad = await runIntake({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: '/nonexistent' }, 'retention', 'sweep', '--org', 'nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--org must be an organization UUID/);
  });

  it('domain events past DOMAIN_EVENT_RETENTION_DAYS are purged by the sweep and by `intake retention sweep`', async () => {
    /** `n` events of the organization recorded `daysAgo` days ago. */
    const recorded = async (n: number, daysAgo: number) => {
      for (let i = 0; i < n; i++) {
        await ctx.pool.query(sql.unsafe`
          INSERT INTO domain_events (organization_id, type, subject_id, payload, recorded_at)
          VALUES (${ctx.org.organizationId}, 'agent_session.processed', ${randomUUID()}, '{}'::jsonb, now() - make_interval(days => ${daysAgo}))`);
      }
    };
    const left = () =>
      ctx.pool.anyFirst(sql.type(z.object({ days: z.number() }))`
        SELECT round(extract(epoch FROM now() - recorded_at) / 86400)::int AS days FROM domain_events
        WHERE organization_id = ${ctx.org.organizationId} AND recorded_at < now() - interval '1 day' ORDER BY days`);
    await recorded(2, 40);
    await recorded(1, 5);
    // The worker's default retention (30 days): the sweep workflow purges the two older events.
    const result = await ctx.api.temporal.client.workflow.execute(RETENTION_SWEEP_WORKFLOW, {
      taskQueue: ctx.worker.taskQueue,
      workflowId: `retention-events-${randomUUID()}`,
      args: [{ version: 1 }],
    });
    assert.deepEqual(result, { deletedSessions: 0, purgedAuthorizations: 0, purgedEvents: 2 });
    assert.deepEqual(await left(), [5]);
    // A shorter setting: the CLI purges the five-day-old one too.
    const cli = await runIntake(
      { DATABASE_URL: ctx.databaseUrl, DATA_DIR: '/nonexistent', DOMAIN_EVENT_RETENTION_DAYS: '3' },
      'retention',
      'sweep',
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.json.purgedEvents, 1);
    assert.deepEqual(await left(), []);
  });

  it('idempotency keys past 24 hours are purged by the sweep and by `intake retention sweep`', async () => {
    /** A key of the organization's API key, created `hoursAgo` hours ago. */
    const key = (name: string, hoursAgo: number) =>
      ctx.pool.query(sql.unsafe`
        INSERT INTO idempotency_keys (organization_id, credential, idempotency_key, request_hash, state, claim, response_status, created_at)
        VALUES (${ctx.org.organizationId}, 'apiKey:retention', ${name}, decode('00', 'hex'), 'completed', gen_random_uuid(), 201,
                now() - make_interval(hours => ${hoursAgo}))`);
    const left = () =>
      ctx.pool.anyFirst(sql.type(z.object({ idempotency_key: z.string() }))`
        SELECT idempotency_key FROM idempotency_keys WHERE credential = 'apiKey:retention' ORDER BY idempotency_key`);
    await key('old-1', 25);
    await key('old-2', 48);
    await key('young', 23);
    const result = await ctx.api.temporal.client.workflow.execute(RETENTION_SWEEP_WORKFLOW, {
      taskQueue: ctx.worker.taskQueue,
      workflowId: `retention-idempotency-${randomUUID()}`,
      args: [{ version: 1 }],
    });
    assert.equal(result.purgedIdempotencyKeys, 2);
    assert.deepEqual(await left(), ['young']);
    await ctx.pool.query(
      sql.unsafe`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE credential = 'apiKey:retention'`,
    );
    const cli = await runIntake({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: '/nonexistent' }, 'retention', 'sweep');
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(cli.json.purgedIdempotencyKeys, 1);
    assert.deepEqual(await left(), []);
  });

  it('an application deleted with sessions=delete: its conversations vanish from reads at once and the sweep deletes them', async () => {
    const doomedApp = await ctx.newApp();
    const keptApp = await ctx.newApp();
    const doomed = [];
    for (const name of ['d-1', 'd-2', 'd-3']) doomed.push(await conversation(doomedApp, name, 0));
    const kept = await conversation(keptApp, 'k-1', 0);
    const headers = { 'X-Service-Api-Key': ctx.org.apiKey };
    const del = (id: string, query = '') => ctx.api.request(`/v3/rest/agent-applications/${id}${query}`, { method: 'DELETE', headers });
    const bad = await del(doomedApp.app.id, '?sessions=all');
    assert.deepEqual([bad.status, bad.body.errorCode], [400, 'validation_failed']);

    assert.equal((await del(doomedApp.app.id, '?sessions=delete')).status, 204);
    assert.equal((await del(keptApp.app.id)).status, 204, 'keep by default');
    assert.equal((await del(doomedApp.app.id, '?sessions=delete')).status, 404, 'again: 404');
    // Gone from every read at once; the kept application's conversation stays readable.
    for (const id of doomed) {
      const res = await ctx.api.request(`/v3/rest/agent-conversations/sessions/${id}`, { headers });
      assert.equal(res.status, 404);
    }
    const listed = await ctx.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${doomedApp.app.id}`, { headers });
    assert.deepEqual(listed.body.sessions, []);
    assert.equal((await ctx.api.request(`/v3/rest/agent-conversations/sessions/${kept}`, { headers })).status, 200);
    // The ingest secret stops at once.
    const refused = await ctx.ingest(doomedApp, sessionRequest(doomedApp, [userMessage(1, 'q')], { externalSessionId: 'after' }));
    assert.ok(refused.status === 401 || refused.status === 404, String(refused.status));

    // The sweep (a Temporal workflow, batches of 2 here) deletes their rows.
    const handle = await ctx.api.temporal.client.workflow.start(RETENTION_SWEEP_WORKFLOW, {
      taskQueue: ctx.worker.taskQueue,
      workflowId: `retention-app-delete-${randomUUID()}`,
      args: [{ batchSize: 2 }],
    });
    const result = (await handle.result()) as { deletedSessions: number };
    assert.ok(result.deletedSessions >= 3, JSON.stringify(result));
    for (const id of doomed) assert.equal(await exists(id), false);
    assert.equal(await exists(kept), true);
    const events = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_events WHERE session_id = ANY(${sql.array(doomed, 'uuid')})`);
    assert.equal(events, 0);
  });
});
