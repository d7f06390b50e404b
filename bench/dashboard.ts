/**
 * `npm run bench -- dashboard`: the operators' dashboard fed by a real run, as a picture for the docs
 * (docs/images/dashboard.png). The production API and worker entrypoints run as processes with
 * their metrics endpoints, Debian's Prometheus scrapes them every 2 s, and a mixed load runs for
 * about two minutes: agent ingest at two paced rates (some repeats, some refused), feedback records
 * (some invalid, a burst over the rate limit), direct uploads of the bundled sample (and one file
 * that is not media), meeting bots, and an organization that runs out of credits and is topped up.
 * Then every query of deploy/grafana/dashboards/intake.json is asked of Prometheus over the run
 * (`$__rate_interval` read as 10 s) and drawn in the dashboard's own layout (bench/dashboard-render.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import { createDatabasePool } from '../src/db/pool.js';
import { addCredits } from '../src/db/repositories/organizations.js';
import { freePort } from '../src/dev/net.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { startApiProcess } from '../harness/api-process.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestOrg, createTestUser } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { httpStatus, waitFor } from '../harness/wait.js';
import { event } from './agent-events.js';
import { percentile } from './stats.js';
import { renderDashboard, type PanelData } from './dashboard-render.js';

const DASHBOARD = path.join(PROJECT_ROOT, 'deploy', 'grafana', 'dashboards', 'intake.json');
const PICTURE = path.join(PROJECT_ROOT, 'docs', 'images', 'dashboard.png');
const SAMPLE = path.join(PROJECT_ROOT, 'samples', 'librivox-sense-and-sensibility-0870.flac');
const SCRAPE_SECONDS = 2;
const RATE_INTERVAL = '10s';
/** Sessions the agent load spreads its events over; analyses cost one credit each and the organization has fewer. */
const SESSIONS = 200;
const CREDITS = 150;

interface Dashboard {
  panels: {
    type: string;
    title: string;
    gridPos: PanelData['gridPos'];
    targets?: { expr: string; legendFormat?: string }[];
    fieldConfig?: { defaults?: { unit?: string } };
  }[];
}

/** What the run sent, by kind and status. */
class Tally {
  readonly counts: Record<string, Record<string, number>> = {};
  readonly latencies: Record<string, number[]> = {};
  add(kind: string, status: number | string, ms?: number): void {
    const k = (this.counts[kind] ??= {});
    k[String(status)] = (k[String(status)] ?? 0) + 1;
    if (ms !== undefined) (this.latencies[kind] ??= []).push(ms);
  }

  /** Client-side latency per kind: p50, p99, max (ms). */
  summary(): Record<string, { p50: number; p99: number; max: number }> {
    return Object.fromEntries(
      Object.entries(this.latencies).map(([kind, all]) => {
        const sorted = [...all].sort((a, b) => a - b);
        return [kind, { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: percentile(sorted, 100) }];
      }),
    );
  }
}

/** Calls `task(i)` `rate` times a second for `seconds`, at most `inFlight` at once (a late call is sent late, not dropped). */
async function paced(rate: number, seconds: number, inFlight: number, task: (i: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const total = Math.round(rate * seconds);
  const running = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate - performance.now();
    if (due > 0) await sleep(due);
    while (running.size >= inFlight) await Promise.race(running);
    const p: Promise<void> = task(i)
      .catch(() => undefined)
      .finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
}

function launchWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', 'worker.ts')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** Debian's Prometheus (`apt-get install prometheus`), scraping the API and the worker every SCRAPE_SECONDS. */
async function startPrometheus(dir: string, targets: { api: number; worker: number }): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      `  scrape_interval: ${SCRAPE_SECONDS}s`,
      `  evaluation_interval: ${SCRAPE_SECONDS}s`,
      'scrape_configs:',
      '  - job_name: intake-api',
      '    static_configs:',
      `      - targets: ["127.0.0.1:${targets.api}"]`,
      '  - job_name: intake-worker',
      '    static_configs:',
      `      - targets: ["127.0.0.1:${targets.worker}"]`,
      '',
    ].join('\n'),
  );
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  child.once('error', (error) => process.stderr.write(`prometheus: ${error.message} (apt-get install prometheus)\n`));
  const url = `http://127.0.0.1:${port}`;
  if (!(await waitFor(async () => (await httpStatus(`${url}/-/ready`)) === 200, 30_000)))
    throw new Error('Prometheus did not become ready');
  return { url, child };
}

/** One call of Prometheus's HTTP API (`query` or `query_range`): its result, or an error naming `what` when Prometheus refuses it. */
async function prometheusApi<R>(
  prometheus: string,
  endpoint: 'query' | 'query_range',
  params: Record<string, string>,
  what: string,
): Promise<R[]> {
  const res = await fetch(`${prometheus}/api/v1/${endpoint}?${new URLSearchParams(params).toString()}`);
  const body = (await res.json()) as { status: string; error?: string; data: { result: R[] } };
  if (body.status !== 'success') throw new Error(`${what}: ${body.error}`);
  return body.data.result;
}

/** Every dashboard query over [start, end], as the dashboard would draw it. */
async function queryPanels(prometheus: string, dashboard: Dashboard, start: number, end: number): Promise<PanelData[]> {
  const panels: PanelData[] = [];
  for (const panel of dashboard.panels) {
    const data: PanelData = {
      type: panel.type,
      title: panel.title,
      gridPos: panel.gridPos,
      unit: panel.fieldConfig?.defaults?.unit ?? 'short',
      series: [],
    };
    for (const target of panel.targets ?? []) {
      const result = await prometheusApi<{ metric: Record<string, string>; values: [number, string][] }>(
        prometheus,
        'query_range',
        {
          query: target.expr.replaceAll('$__rate_interval', RATE_INTERVAL),
          start: String(start),
          end: String(end),
          step: String(SCRAPE_SECONDS),
        },
        panel.title,
      );
      for (const r of result) {
        const name =
          (target.legendFormat ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, label: string) => r.metric[label] ?? '').trim() ||
          JSON.stringify(r.metric);
        data.series.push({ name, points: r.values.map(([t, v]) => [t, Number(v)]) });
      }
    }
    panels.push(data);
  }
  return panels;
}

/**
 * Counts over the whole run, from the same scrapes: what the load cost the worker (analysis rounds
 * held, workflow tasks, activities, the fewest free workflow task slots) beside what it did.
 */
const TOTALS: Record<string, string> = {
  analysed: 'sum(increase(intake_agent_analyses_total{outcome="analysed"}[RUN]))',
  roundsHeld: 'sum(increase(intake_agent_analysis_rounds_held_total[RUN]))',
  workflowTasks: 'sum(increase(temporal_workflow_task_execution_latency_seconds_count[RUN]))',
  activityTasks: 'sum(increase(temporal_activity_execution_latency_seconds_count[RUN]))',
  localActivities: 'sum(increase(temporal_local_activity_execution_latency_seconds_count[RUN]))',
  workflowSlotsFreeMin: 'min(min_over_time(temporal_worker_task_slots_available{worker_type="WorkflowWorker"}[RUN]))',
};

async function queryTotals(prometheus: string, start: number, end: number): Promise<Record<string, number | null>> {
  const totals: Record<string, number | null> = {};
  for (const [name, expr] of Object.entries(TOTALS)) {
    const result = await prometheusApi<{ value: [number, string] }>(
      prometheus,
      'query',
      { query: expr.replace('RUN', `${Math.ceil(end - start)}s`), time: String(end) },
      name,
    );
    const value = result[0]?.value[1];
    totals[name] = value === undefined ? null : Math.round(Number(value));
  }
  return totals;
}

export async function benchDashboard(): Promise<Record<string, unknown>> {
  const stack = await testStack();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-dashboard-'));
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl);
  const org = await createTestOrg(pool, { credits: CREDITS });
  const user = await createTestUser(pool, org.organizationId, 'admin', 3600);
  const app = await createApplication(pool, { organizationId: org.organizationId, name: 'Dashboard', agentKey: 'bench' });
  const { secret } = await issueCredential(pool, app);
  const [apiMetrics, workerMetrics] = [await freePort(), await freePort()];
  const env = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: stack.temporal.address,
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    TEMPORAL_TASK_QUEUE: 'intake',
    STORAGE_DIR: path.join(dir, 'media'),
    TRANSCRIBER: 'pocketsphinx',
    FEEDBACK_RATE_LIMIT_PER_MINUTE: '600',
    AGENT_BILLING_RECHECK_SECONDS: '10',
    LOCAL_RECORDER_MEETING_SECONDS: '20',
    METRICS_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  const worker = launchWorker({ ...env, METRICS_PORT: String(workerMetrics) });
  const processes: ChildProcess[] = [worker];
  const tally = new Tally();
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  try {
    if (!(await waitFor(async () => (await httpStatus(`http://127.0.0.1:${workerMetrics}/healthz`)) === 200, 120_000)))
      throw new Error('the worker did not start');
    const api = await startApiProcess({ ...env, METRICS_PORT: String(apiMetrics) });
    processes.push(api.child);
    const prometheus = await startPrometheus(dir, { api: apiMetrics, worker: workerMetrics });
    processes.push(prometheus.child);
    const call = async (kind: string, method: string, url: string, headers: Record<string, string>, body?: string | Buffer) => {
      const t = performance.now();
      const res = await request(`${api.url}${url}`, {
        method: method as 'POST',
        dispatcher,
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.body.text();
      tally.add(kind, res.statusCode, performance.now() - t);
      return { status: res.statusCode, headers: res.headers, text };
    };
    const json = { 'content-type': 'application/json' };
    const key = { ...json, 'x-service-api-key': org.apiKey };

    const start = Date.now() / 1000;
    await sleep(15_000);
    const marks: Record<string, number> = { loadStarted: Date.now() / 1000 };

    // Agent ingest: one event per request over SESSIONS sessions; every 10th a repeat (deduplicated), every 50th refused (400).
    const agent = (i: number) => {
      const s = i % SESSIONS;
      const seq = Math.floor(i / SESSIONS);
      const events = i % 50 === 49 ? [{ ...event(seq), type: 'not_an_event_type' }] : [event(i % 10 === 9 && seq > 0 ? seq - 1 : seq)];
      return call(
        'agentIngest',
        'POST',
        '/v3/rest/agent-conversations/ingest',
        { ...json, 'x-service-agent-key': secret },
        JSON.stringify({ agentKey: 'bench', externalSessionId: `dash-${s}`, participants: [], events }),
      ).then(() => undefined);
    };
    let agentIndex = 0;
    const agentLoad = (async () => {
      await paced(60, 40, 64, () => agent(agentIndex++));
      await paced(150, 40, 64, () => agent(agentIndex++));
    })();

    // Feedback: a source and a person, then records at 4/s (every 5th invalid), and a burst over the rate limit at 45 s.
    const source = JSON.parse(
      (await call('feedback', 'POST', '/v3/rest/feedback-sources', key, JSON.stringify({ name: 'Dashboard', type: 'api' }))).text,
    ) as { id: number };
    const person = JSON.parse(
      (
        await call(
          'feedback',
          'PUT',
          '/v3/rest/people',
          key,
          JSON.stringify({
            first_name: 'Ada',
            last_name: 'Lovelace',
            email: 'ada@example.com',
            boundary: 'external',
          }),
        )
      ).text,
    ) as { id: number };
    const record = (i: number) =>
      call(
        'feedback',
        'POST',
        `/v3/rest/feedback-sources/${source.id}/records`,
        key,
        JSON.stringify({
          person_id: person.id,
          display_ts: new Date().toISOString(),
          external_id: `fb-${i}`,
          fields: [
            i % 5 === 4
              ? { category: 'content', type: 'integer', name: 'body', value: 'not a number' }
              : { category: 'content', type: 'string', name: 'body', value: 'Export to CSV fails' },
          ],
        }),
      ).then(() => undefined);
    let feedbackIndex = 0;
    const feedbackLoad = (async () => {
      await paced(4, 45, 8, () => record(feedbackIndex++));
      await paced(100, 8, 16, () => record(feedbackIndex++));
      await paced(4, 27, 8, () => record(feedbackIndex++));
    })();

    // Media: the bundled sample uploaded directly, four times, and once a file that is not media.
    const sample = await readFile(SAMPLE);
    const upload = async (i: number, bytes: Buffer) => {
      const created = await call(
        'media',
        'POST',
        '/v3/rest/recordings',
        key,
        JSON.stringify({ record: { externalId: `dash-${i}` }, name: `Call ${i}` }),
      );
      const { id } = JSON.parse(created.text) as { id: string };
      const u = await call(
        'media',
        'POST',
        `/v3/rest/recordings/${id}/uploads`,
        key,
        JSON.stringify({ fileName: `call-${i}.flac`, fileSize: bytes.length }),
      );
      const { uploadUrl } = JSON.parse(u.text) as { uploadUrl: string };
      const res = await request(uploadUrl, {
        method: 'PATCH',
        dispatcher,
        body: bytes,
        headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      });
      await res.body.text();
      tally.add('media', res.statusCode);
    };
    const mediaLoad = (async () => {
      for (let i = 0; i < 5; i++) {
        await sleep(12_000);
        await upload(i, i === 2 ? Buffer.alloc(sample.length, 7) : sample);
      }
    })();

    // Meeting bots (the built-in recorder: each records LOCAL_RECORDER_MEETING_SECONDS, then its recording is ingested).
    const bearer = { ...json, authorization: `Bearer ${user.accessToken}` };
    const meetings = (async () => {
      for (const code of ['abc-defg-hij', 'klm-nopq-rst', 'uvw-xyza-bcd']) {
        await sleep(15_000);
        await call(
          'meetingJoin',
          'POST',
          '/v3/rest/recordings/meeting-joins',
          bearer,
          JSON.stringify({ type: 'meetingUrl', joinUrl: `https://meet.google.com/${code}` }),
        );
      }
    })();

    await Promise.all([agentLoad, feedbackLoad, mediaLoad, meetings]);
    marks.loadEnded = Date.now() / 1000;
    // The organization ran out of credits during the load: a top-up, then the backlog drains.
    await pool.transaction((tx) => addCredits(tx, org.organizationId, 100_000, 'dashboard top-up'));
    marks.toppedUp = Date.now() / 1000;
    await sleep(45_000);
    const end = Date.now() / 1000;

    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const panels = await queryPanels(prometheus.url, dashboard, start, end);
    const empty = panels.filter((p) => p.type !== 'row' && !p.series.some((s) => s.points.some(([, v]) => Number.isFinite(v) && v !== 0)));
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
    const subtitle =
      `npm run bench -- dashboard at ${sha} on ${os.cpus().length} cores: ${new Date(start * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
      `${((end - start) / 60).toFixed(1)} minutes; Prometheus every ${SCRAPE_SECONDS} s, rates over ${RATE_INTERVAL}`;
    await renderDashboard(panels, { title: 'Intake overview', subtitle, from: start, to: end, outPath: PICTURE });
    return {
      benchmark: 'dashboard',
      measuredAt: new Date().toISOString(),
      setup: {
        processes: 'src/main/api.ts and src/main/worker.ts (production entrypoints), Debian Prometheus scraping every 2 s',
        rateInterval: RATE_INTERVAL,
        sessions: SESSIONS,
        credits: CREDITS,
        load: 'agent ingest 60/s for 40 s then 150/s for 40 s (1 in 10 repeated, 1 in 50 refused); feedback 4/s with a 100/s burst for 8 s over a limit of 600/min (1 in 5 invalid); 5 direct uploads (1 not media); 3 meeting bots; a top-up after the load',
      },
      seconds: { total: Math.round(end - start), ...Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v - start)])) },
      requests: tally.counts,
      clientLatencyMs: tally.summary(),
      totals: await queryTotals(prometheus.url, start, end),
      panels: panels
        .filter((p) => p.type !== 'row')
        .map((p) => ({ title: p.title, series: p.series.map((s) => s.name), points: p.series.reduce((n, s) => n + s.points.length, 0) })),
      panelsAllZero: empty.map((p) => p.title),
      picture: path.relative(PROJECT_ROOT, PICTURE),
    };
  } finally {
    await dispatcher.close();
    for (const child of processes.reverse()) await stopProcess(child);
    await pool.end();
    await stopTestStack();
    await rm(dir, { recursive: true, force: true });
  }
}
