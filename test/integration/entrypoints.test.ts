import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/dev/net.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { deadline, httpStatus, waitFor } from '../../harness/wait.js';
import { connectTemporalClient, type TemporalClient } from '../../src/temporal/connection.js';
import { diagnosticsWorkflowId } from '../../src/temporal/ids.js';
import { diagnosticsWorkflow } from '../../workflows/diagnostics/workflow.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../harness/config.js';
import { createTestDatabase, testStack } from '../../harness/stack.js';
import { createDatabasePool } from '../../src/db/pool.js';
import { createApplication, issueCredential } from '../../src/agents/applications.js';
import { createTestOrg } from '../../harness/fixtures.js';
import { assistantMessage, userMessage } from '../../harness/agents.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
}

/**
 * A stand-in for an OpenTelemetry collector: OTLP/HTTP with JSON bodies on POST /v1/traces, as the
 * exporter sends them; keeps the spans and the headers of each export.
 */
async function otlpReceiver(): Promise<{
  url: string;
  spans: ExportedSpan[];
  headers: Record<string, string | string[] | undefined>[];
  close(): Promise<void>;
}> {
  const spans: ExportedSpan[] = [];
  const headers: Record<string, string | string[] | undefined>[] = [];
  type Body = {
    resourceSpans: {
      resource: { attributes: { key: string; value: { stringValue?: string } }[] };
      scopeSpans: { spans: Omit<ExportedSpan, 'service'>[] }[];
    }[];
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        headers.push(req.headers);
        for (const rs of (JSON.parse(body) as Body).resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, headers, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function launch(entry: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', entry)], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** The processes whose parent is `pid` (from /proc). */
function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stop(child: ChildProcess, timeoutMs = 20_000): Promise<number | string | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return Promise.race([exited, deadline(timeoutMs, 'still running')]);
}

/** The Prometheus text an operational endpoint serves. */
async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

/** The value of one sample (0 when absent): `name` with exactly `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = (m[2] ?? '')
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter(Boolean)
      .sort()
      .join(',');
    if (got === want) return Number(m[3]);
  }
  return 0;
}

/** The production entrypoints (`npm run start:api`, `npm run start:worker`) against the harness's services. */
describe('API and worker entrypoints', function () {
  this.timeout(120_000);
  let env: Record<string, string>;
  let temporal: TemporalClient;
  const running: ChildProcess[] = [];

  before(async () => {
    const stack = await testStack();
    env = {
      DATABASE_URL: await createTestDatabase(),
      TEMPORAL_ADDRESS: stack.temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      LOG_LEVEL: 'info',
      // Tests that scrape metrics give a free port; the others open none.
      METRICS_PORT: 'off',
    };
    temporal = await connectTemporalClient({ temporal: { ...testConfig().temporal, address: stack.temporal.address } });
  });
  after(async () => {
    for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
    await temporal?.connection.close();
  });

  it('API: applies migrations, becomes ready, counts its requests on METRICS_PORT, and exits 0 on SIGTERM', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const api = launch('api.ts', {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    running.push(api.child);
    const ready = await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 30_000);
    assert.ok(ready, api.output().slice(-2000));
    assert.match(api.output(), /"msg":"API listening"/);
    const before = sample(await scrape(metricsPort), 'intake_http_request_duration_seconds_count', {
      method: 'GET',
      route: '/readyz',
      status: '200',
    });
    for (let i = 0; i < 5; i++) assert.equal(await httpStatus(`http://127.0.0.1:${port}/readyz`), 200);
    assert.equal(await httpStatus(`http://127.0.0.1:${port}/v3/rest/organization`), 401);
    const text = await scrape(metricsPort);
    assert.equal(
      sample(text, 'intake_http_request_duration_seconds_count', { method: 'GET', route: '/readyz', status: '200' }),
      before + 5,
    );
    assert.equal(
      sample(text, 'intake_http_request_duration_seconds_count', { method: 'GET', route: '/v3/rest/organization', status: '401' }),
      1,
    );
    assert.ok(sample(text, 'intake_db_pool_connections', { state: 'idle' }) >= 1);
    assert.ok(sample(text, 'process_cpu_seconds_total') > 0);
    // The API port does not serve them.
    assert.equal(await httpStatus(`http://127.0.0.1:${port}/metrics`), 404);
    assert.equal(await stop(api.child), 0, api.output().slice(-2000));
  });

  it('API_PROCESSES=2: two API processes share the port; one that dies is replaced; SIGTERM stops them all (exit 0)', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const api = launch('api.ts', {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      API_PROCESSES: '2',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    running.push(api.child);
    const ready = await waitFor(async () => /"processes":2,"msg":"API listening"/.test(api.output()), 30_000);
    assert.ok(ready, api.output().slice(-2000));
    const children = () => childPids(api.child.pid!);
    assert.equal(children().length, 2);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => httpStatus(`http://127.0.0.1:${port}/readyz`)));
    assert.deepEqual([...new Set(statuses)], [200]);
    // The supervisor serves both processes' metrics, added up: every request counted once.
    const counted = sample(await scrape(metricsPort), 'intake_http_request_duration_seconds_count', {
      method: 'GET',
      route: '/readyz',
      status: '200',
    });
    assert.ok(counted >= 20, `counted ${counted}: ${api.output().slice(-2000)}`);
    const [first] = children();
    process.kill(first!, 'SIGKILL');
    const replaced = await waitFor(async () => children().length === 2 && !children().includes(first!), 30_000);
    assert.ok(replaced, api.output().slice(-2000));
    assert.match(api.output(), /an API process exited; starting another/);
    assert.ok(await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 30_000));
    const before = children();
    assert.equal(await stop(api.child), 0, api.output().slice(-2000));
    assert.ok(
      before.every((pid) => !alive(pid)),
      'every API process has exited',
    );
  });

  it('API: refuses to start without SIGNING_SECRET, naming the variable', async () => {
    const { SIGNING_SECRET: _omitted, ...rest } = env;
    const api = launch('api.ts', { ...rest, PORT: String(await freePort()) });
    running.push(api.child);
    const code = await new Promise<number | null>((resolve) => api.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(api.output(), /SIGNING_SECRET is required/);
  });

  it('API: refuses to start in production without PUBLIC_BASE_URL (links are never built from a Host header)', async () => {
    const api = launch('api.ts', { ...env, NODE_ENV: 'production', PORT: String(await freePort()) });
    running.push(api.child);
    const code = await new Promise<number | null>((resolve) => api.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(api.output(), /PUBLIC_BASE_URL \(with NODE_ENV=production\) is required/);
  });

  it('worker: refuses to start in production without the prebuilt workflow bundle, naming WORKFLOW_BUNDLE_PATH', async () => {
    const { WORKFLOW_BUNDLE_PATH: _omitted, ...rest } = env;
    const worker = launch('worker.ts', { ...rest, NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://127.0.0.1:1', METRICS_PORT: 'off' });
    running.push(worker.child);
    const code = await new Promise<number | null>((resolve) => worker.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(worker.output(), /WORKFLOW_BUNDLE_PATH is required with NODE_ENV=production/);
  });

  it('worker: runs workflows on its task queue and drains on SIGTERM', async () => {
    const taskQueue = `entry-${randomUUID()}`;
    const metricsPort = await freePort();
    const worker = launch('worker.ts', {
      ...env,
      TEMPORAL_TASK_QUEUE: taskQueue,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    running.push(worker.child);
    assert.ok(
      await waitFor(async () => (await httpStatus(`http://127.0.0.1:${metricsPort}/healthz`)) === 200, 30_000),
      worker.output().slice(-2000),
    );
    const result = await temporal.client.workflow.execute(diagnosticsWorkflow, {
      workflowId: diagnosticsWorkflowId(randomUUID()),
      taskQueue,
      args: [{ version: 1, requestedBy: 'entrypoint test' }],
      workflowExecutionTimeout: '60s',
    });
    assert.equal(result.worker.taskQueue, taskQueue);
    // One scrape: the process's own metrics and the Temporal SDK's, which moved with the workflow.
    const text = await scrape(metricsPort);
    assert.ok(sample(text, 'process_cpu_seconds_total') > 0);
    assert.match(text, /^intake_agent_sessions_waiting \d+$/m);
    // Read by the dashboard and an alert (test/unit/deploy/observability.test.ts).
    assert.match(text, /^temporal_worker_task_slots_available\{[^}]*worker_type="ActivityWorker"/m);
    assert.match(text, /^temporal_workflow_completed_total\{[^}]*workflow_type="diagnosticsWorkflow"[^}]*\} [1-9]/m);
    assert.equal(await stop(worker.child), 0, worker.output().slice(-2000));
    assert.match(worker.output(), /worker stopped/);
  });

  it("worker: one JSON log stream (its own, the SDK's, the core's, activities' and workflows'), with workflowId, runId and activityType; no task token or secret", async () => {
    const taskQueue = `logs-${randomUUID()}`;
    const metricsPort = await freePort();
    const worker = launch('worker.ts', {
      ...env,
      LOG_LEVEL: 'debug',
      TEMPORAL_TASK_QUEUE: taskQueue,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    running.push(worker.child);
    assert.ok(
      await waitFor(async () => (await httpStatus(`http://127.0.0.1:${metricsPort}/healthz`)) === 200, 30_000),
      worker.output().slice(-2000),
    );
    const workflowId = diagnosticsWorkflowId(randomUUID());
    const handle = await temporal.client.workflow.start(diagnosticsWorkflow, {
      workflowId,
      taskQueue,
      args: [{ version: 1, requestedBy: 'log test' }],
      workflowExecutionTimeout: '60s',
    });
    await handle.result();
    assert.equal(await stop(worker.child), 0, worker.output().slice(-2000));
    const lines = worker
      .output()
      .split('\n')
      .filter((l) => l.trim());
    const records = lines.map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return assert.fail(`not a JSON log line: ${l.slice(0, 300)}`);
      }
    });
    assert.ok(records.every((r) => r.service === 'intake-worker' && typeof r.level === 'number' && typeof r.time === 'string'));
    const activity = records.find((r) => r.msg === 'Activity completed' && r.workflowId === workflowId);
    assert.ok(activity, 'an activity line of this workflow');
    assert.equal(activity.runId, handle.firstExecutionRunId);
    assert.equal(typeof activity.activityType, 'string');
    const workflow = records.find((r) => r.msg === 'Workflow completed' && r.workflowId === workflowId);
    assert.ok(workflow, 'a workflow line');
    assert.equal(workflow.runId, handle.firstExecutionRunId);
    assert.ok(
      records.some((r) => r.sdkComponent === 'core'),
      "the core's own lines, forwarded",
    );
    assert.ok(records.some((r) => r.msg === 'worker running'));
    const text = worker.output();
    assert.doesNotMatch(text, /taskToken/);
    assert.ok(!text.includes(TEST_SIGNING_SECRET), 'the signing secret is never logged');
  });
  it('OTEL_EXPORTER_OTLP_ENDPOINT: the API and the worker export one trace of an agent ingest over OTLP/HTTP', async () => {
    const receiver = await otlpReceiver();
    try {
      const pool = await createDatabasePool(env.DATABASE_URL!);
      const org = await createTestOrg(pool, { credits: 10 });
      const application = await createApplication(pool, { organizationId: org.organizationId, name: 'Traced', agentKey: 'traced' });
      const { secret } = await issueCredential(pool, application);
      await pool.end();
      const taskQueue = `traces-${randomUUID()}`;
      const tracing = {
        TEMPORAL_TASK_QUEUE: taskQueue,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector-secret',
        // The batch processor's delay, so that the test does not wait the default 5 s.
        OTEL_BSP_SCHEDULE_DELAY: '200',
      };
      const [port, workerPort] = [await freePort(), await freePort()];
      const api = launch('api.ts', { ...env, ...tracing, PORT: String(port), HOST: '127.0.0.1' });
      const worker = launch('worker.ts', { ...env, ...tracing, METRICS_HOST: '127.0.0.1', METRICS_PORT: String(workerPort) });
      running.push(api.child, worker.child);
      assert.ok(
        await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 30_000),
        api.output().slice(-2000),
      );
      assert.ok(
        await waitFor(async () => (await httpStatus(`http://127.0.0.1:${workerPort}/healthz`)) === 200, 60_000),
        worker.output().slice(-2000),
      );
      const res = await fetch(`http://127.0.0.1:${port}/v3/rest/agent-conversations/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Service-Agent-Key': secret },
        body: JSON.stringify({
          agentKey: 'traced',
          externalSessionId: 'traced-1',
          status: 'ended',
          participants: [],
          events: [userMessage(1, 'the export is broken again'), assistantMessage(2, 'looking into it')],
        }),
      });
      assert.equal(res.status, 202);
      const server = await waitFor(async () => receiver.spans.some((s) => s.name === 'POST /v3/rest/agent-conversations/ingest'), 30_000);
      assert.ok(server, api.output().slice(-2000));
      const traceId = receiver.spans.find((s) => s.name === 'POST /v3/rest/agent-conversations/ingest')!.traceId;
      const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
      // Spans are exported as they end: the workflow run's after its last activity's.
      const names = () => new Set(inTrace().map((s) => s.name));
      assert.ok(
        await waitFor(async () => names().has('RunActivity:analyseQueued') && names().has('RunWorkflow:agentSessionWorkflow'), 60_000),
        `spans: ${inTrace()
          .map((s) => `${s.service}:${s.name}`)
          .join(', ')}`,
      );
      const services = new Set(inTrace().map((s) => `${s.service} ${s.name}`));
      for (const expected of [
        'intake-api POST /v3/rest/agent-conversations/ingest',
        'intake-worker wake agent session',
        'intake-worker SignalWithStartWorkflow:agentSessionWorkflow',
        'intake-worker RunWorkflow:agentSessionWorkflow',
        'intake-worker RunActivity:analyseQueued',
      ])
        assert.ok(services.has(expected), `${expected} in ${[...services].join(', ')}`);
      assert.ok(
        receiver.headers.every((h) => h['x-collector-key'] === 'collector-secret'),
        'OTEL_EXPORTER_OTLP_HEADERS on every export',
      );
      // Both stop cleanly, exporting what they still hold.
      assert.equal(await stop(api.child), 0, api.output().slice(-2000));
      assert.equal(await stop(worker.child), 0, worker.output().slice(-2000));
      assert.ok(
        !api.output().includes('collector-secret') && !worker.output().includes('collector-secret'),
        "the exporter's headers are never logged",
      );
    } finally {
      await receiver.close();
    }
  });
});
