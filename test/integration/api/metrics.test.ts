import { strict as assert } from 'node:assert';
import {
  agentContext,
  assistantMessage,
  sessionRequest,
  userMessage,
  type AgentContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey } from '../../../harness/fixtures.js';
import { createWorkerMetrics } from '../../../src/metrics/worker-metrics.js';
import { freePort } from '../../../src/dev/net.js';
import { sampleValue } from '../../helpers/metrics.js';

/** An id that names no session. */
const UNKNOWN_SESSION = '00000000-0000-4000-8000-000000000000';

/** The API's Prometheus metrics move with real requests (the registry METRICS_PORT serves). */
describe('API metrics', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  /** A sample's value in `api`'s registry (0 when absent). */
  const value = (api: TestApi, name: string, labels: Record<string, string> = {}) => sampleValue(api.deps.metrics.registry, name, labels);

  it('agent events by outcome, and the events of refused requests by errorCode', async () => {
    const first = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'hello'), assistantMessage(2, 'hi')], { externalSessionId: 'm-1' }),
    );
    assert.equal(first.status, 202);
    // The same two again (deduplicated), one revised, one new.
    const again = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'hello'), assistantMessage(2, 'hi there', { revision: 2 }), userMessage(3, 'more')], {
        externalSessionId: 'm-1',
      }),
    );
    assert.equal(again.status, 202, JSON.stringify(again.body));
    const counts = {
      accepted: first.body.acceptedEventCount + again.body.acceptedEventCount,
      deduplicated: again.body.deduplicatedEventCount,
      revised: again.body.revisedEventCount,
    };
    assert.deepEqual(counts, { accepted: 3, deduplicated: 1, revised: 1 });
    for (const [outcome, n] of Object.entries(counts))
      assert.equal(await value(t.api, 'intake_agent_events_total', { outcome }), n, outcome);
    // A refused request counts its events, under its errorCode; one refused before its body was read counts none.
    const bad = await t.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'x'), { ...userMessage(2, 'y'), type: 'nonsense' } as never], { externalSessionId: 'm-2' }),
    );
    assert.equal(bad.status, 400);
    assert.equal(await value(t.api, 'intake_agent_events_rejected_total', { reason: 'validation_failed' }), 2);
    assert.equal((await t.ingest(null, sessionRequest(app, [userMessage(1, 'x')]))).status, 401);
    assert.equal(await value(t.api, 'intake_agent_events_rejected_total', { reason: 'unauthenticated' }), 0);
  });

  it('requests by method, route template and status', async () => {
    const before = await value(t.api, 'intake_http_request_duration_seconds_count', {
      method: 'POST',
      route: '/v3/rest/agent-conversations/ingest',
      status: '202',
    });
    assert.equal((await t.ingest(app, sessionRequest(app, [userMessage(1, 'x')], { externalSessionId: 'm-3' }))).status, 202);
    assert.equal(
      await value(t.api, 'intake_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v3/rest/agent-conversations/ingest',
        status: '202',
      }),
      before + 1,
    );
    assert.equal((await t.api.request('/v3/rest/no-such-thing')).status, 404);
    assert.ok(
      (await value(t.api, 'intake_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })) >= 1,
    );
    // A route with an id is counted under its template, never its path.
    assert.equal(
      (await t.api.request(`/v3/rest/agent-conversations/sessions/${UNKNOWN_SESSION}`, { headers: { 'X-Service-Api-Key': t.org.apiKey } }))
        .status,
      404,
    );
    assert.equal(
      await value(t.api, 'intake_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/v3/rest/agent-conversations/sessions/:sessionId',
        status: '404',
      }),
      1,
    );
    assert.ok((await value(t.api, 'intake_db_pool_connections', { state: 'idle' })) >= 0);
  });

  it('rate-limit refusals by route', async () => {
    const limited = await startTestApi({
      pool: t.pool,
      databaseUrl: t.databaseUrl,
      config: testConfig({ FEEDBACK_RATE_LIMIT_PER_MINUTE: '1' }),
    });
    try {
      const { apiKey: key } = await createTestKey(t.pool, t.org.organizationId, ['feedback:read']);
      const list = () => limited.request('/v3/rest/feedback-sources', { headers: { 'X-Service-Api-Key': key } });
      assert.deepEqual([(await list()).status, (await list()).status, (await list()).status], [200, 429, 429]);
      assert.equal(await value(limited, 'intake_rate_limit_rejections_total', { limit: '/v3/rest/feedback-sources' }), 2);
    } finally {
      await limited.close();
    }
  });

  it("the worker's backlog gauges, read from PostgreSQL at each scrape", async () => {
    const metrics = createWorkerMetrics({ sdkPort: await freePort() });
    metrics.watch(t.pool);
    const line = (text: string, name: string) => text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    const before = Number(line(await metrics.scrape(), 'intake_agent_sessions_waiting')?.split(' ')[1]);
    // An ingest asks for its session's wake; no worker runs here, so it waits.
    assert.equal((await t.ingest(app, sessionRequest(app, [userMessage(1, 'waiting')], { externalSessionId: 'm-wait' }))).status, 202);
    const text = await metrics.scrape();
    assert.equal(Number(line(text, 'intake_agent_sessions_waiting')?.split(' ')[1]), before + 1);
    assert.ok(Number(line(text, 'intake_agent_processing_lag_seconds')?.split(' ')[1]) >= 0);
    assert.match(text, /^intake_media_ingestions_active\{phase="encoding"\} 0$/m);
    assert.match(text, /^intake_media_ingestion_idle_seconds\{phase="encoding"\} 0$/m);
    assert.match(text, /^intake_meeting_bots_active\{state="recording"\} 0$/m);
    assert.match(text, /^intake_agent_sessions_billing_blocked 0$/m);
    // Without the SDK's exporter (no Runtime here) the scrape is the worker's own metrics only.
    assert.doesNotMatch(text, /^temporal_/m);
  });
});
