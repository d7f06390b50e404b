import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createApplication, issueCredential } from '../../../src/agents/applications.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { connectTemporalClient, type TemporalClient } from '../../../src/temporal/connection.js';
import { agentSessionWorkflowId } from '../../../src/temporal/ids.js';
import { ORGANIZATION_ID, SESSION_ID, STATUS } from '../../../src/temporal/search-attributes.js';
import { sessionView } from '../../../workflows/agent-session/contract.js';
import { assistantMessage, sessionRequest, userMessage, type TestAgentApp } from '../../helpers/agents.js';
import { startTestApi, type TestApi } from '../../helpers/app.js';
import { testConfig } from '../../helpers/config.js';
import { createTestOrg, type TestOrg } from '../../helpers/fixtures.js';
import { createTestDatabase, testStack } from '../../helpers/stack.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import { startTestWorker, type TestWorker } from '../../helpers/worker.js';
import { eventually, waitFor } from '../../helpers/wait.js';
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { sessionWorkflowSettings } from '../../../src/agents/session-workflow.js';
import { ensureSessionWakesSchedule } from '../../../src/temporal/schedules.js';

/** After commit, every ingest signal-with-starts `agent-session/<sessionId>` on a real Temporal. */
describe('agent ingest: the session workflow is started and signalled', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let worker: TestWorker;
  let proxy: TcpProxy;
  let temporal: TemporalClient;
  let api: TestApi;
  let org: TestOrg;
  let app: TestAgentApp;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool);
    const stack = await testStack();
    proxy = await TcpProxy.start(Number(stack.temporal.address.split(':')[1]));
    const config = testConfig({ TEMPORAL_TASK_QUEUE: worker.taskQueue, AGENT_SESSION_IDLE_SECONDS: '600' });
    temporal = await connectTemporalClient({ temporal: { ...config.temporal, address: `127.0.0.1:${proxy.port}` } });
    api = await startTestApi({ pool, config, temporal });
    org = await createTestOrg(pool, { credits: 10 });
    const row = await createApplication(pool, { organizationId: org.organizationId, name: 'Wf', agentKey: 'wf' });
    const { row: cred, secret } = await issueCredential(pool, row);
    app = { app: row, agentKey: 'wf', secret, credentialId: cred.id };
  });
  after(async () => {
    await api?.close();
    await temporal?.connection.close();
    await proxy?.down();
    await worker?.stop();
    await pool?.end();
  });

  const ingest = (body: unknown) => api.request('/v3/rest/agent-conversations/ingest', { method: 'POST', headers: { 'X-Service-Agent-Key': app.secret }, json: body });

  it('starts one workflow per session with search attributes, and signals it on the next ingest', async () => {
    const first = await ingest(sessionRequest(app, [userMessage(1, 'q')], { externalSessionId: 'wf-1' }));
    assert.equal(first.status, 202);
    const handle = temporal.client.workflow.getHandle(agentSessionWorkflowId(first.body.sessionId));
    const second = await ingest(sessionRequest(app, [assistantMessage(3, 'a')], { externalSessionId: 'wf-1', status: 'ended' }));
    assert.equal(second.status, 202);
    const view = await eventually(() => handle.query(sessionView), (v) => v.status === 'ended' && v.processedThroughSequence === 3);
    // The second ingest signals only if the first one's wake was taken already (coalescing); either way its work is seen.
    assert.ok(view.ingests >= 1 && view.ingests <= 2, JSON.stringify(view));
    assert.deepEqual({ ...view, ingests: 0 }, { processedThroughSequence: 3, highestSequence: 3, status: 'ended', processingStatus: 'pending', waitingForSequence: null, ingests: 0 });
    // Ended and fully processed: the run finishes (a later revision or feedback would start a new one).
    assert.equal(await handle.result(), 'finished');
    const description = await handle.describe();
    assert.equal(description.status.name, 'COMPLETED');
    assert.equal(description.typedSearchAttributes.get(ORGANIZATION_ID), org.organizationId);
    assert.equal(description.typedSearchAttributes.get(SESSION_ID), first.body.sessionId);
    await eventually(async () => (await handle.describe()).typedSearchAttributes.get(STATUS), (s) => s === 'ended');
  });

  it('Temporal unreachable after commit: 202 all the same; the reconciler schedule wakes the session once Temporal is back, with no retry', async () => {
    const body = sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'a')], { externalSessionId: 'wf-outage' });
    await proxy.down();
    const accepted = await ingest(body);
    assert.deepEqual([accepted.status, accepted.body.acceptedEventCount], [202, 2]);
    const sessionId = accepted.body.sessionId as string;
    assert.ok(await waitFor(async () => api.logs.some((l) => l.includes('agent session wake failed') && l.includes(sessionId)), 30_000), 'the wake did not fail');
    const stored = () => pool.one(sql.type(z.object({ w: z.number().nullable(), wake: z.boolean() }))`
      SELECT processed_through_sequence AS w, wake_requested_at IS NOT NULL AS wake FROM agent_sessions WHERE id = ${sessionId}`);
    assert.deepEqual(await stored(), { w: null, wake: true }, 'stored, not processed, the wake still requested');
    await proxy.up();
    // What the worker creates at start: the reconciler, here every 2 s on this suite's task queue.
    const scheduleId = `wakes-${randomUUID()}`;
    await ensureSessionWakesSchedule(temporal.client, {
      taskQueue: worker.taskQueue, everySeconds: 2, scheduleId,
      settings: sessionWorkflowSettings(testConfig({ TEMPORAL_TASK_QUEUE: worker.taskQueue, AGENT_SESSION_IDLE_SECONDS: '600' })),
    }, { info: () => undefined });
    try {
      assert.deepEqual(await eventually(stored, (s) => s.w === 2 && !s.wake, 60_000), { w: 2, wake: false });
      const view = await temporal.client.workflow.getHandle(agentSessionWorkflowId(sessionId)).query(sessionView);
      assert.equal(view.processedThroughSequence, 2);
    } finally {
      await temporal.client.schedule.getHandle(scheduleId).delete();
    }
  });
});
