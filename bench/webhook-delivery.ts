/**
 * Webhook delivery under the agent load (issue 31), end to end on the real stack (API in this
 * process, the worker in a process of its own with the webhook waker as src/main/worker.ts runs it,
 * the Temporal dev server, PostgreSQL with fsync on), to a receiver on 127.0.0.1, in a process of its
 * own, that verifies every signature with the npm `standardwebhooks` package and answers 204
 * (bench/webhook-receiver-process.ts):
 *  (a) steady load, at each level of BENCH_RPS (25, 50, 100, 300) with an organization endpoint for every
 *      event type of its own: BENCH_SESSIONS (1,000) sessions are opened, then the agent load of `npm run bench -- agent-processing` (open loop, BENCH_RPS
 *      requests/s round-robin over the sessions, two events each, the production signal cadence) for
 *      BENCH_SECONDS (60). Reported: deliveries/s and events recorded/s after the first 10 s of load;
 *      for every event recorded from the start of the load, the time from its commit to the
 *      receiver's 2xx (p50/p95/p99/max, p95 per 10 s, and where it goes: commit to the first attempt,
 *      first attempt to the answer); exactness: every event of the organization reached the receiver
 *      exactly once by `webhook-id` (missing, duplicates, unknown ids, unverified signatures).
 *      The commit time: `domain_events.recorded_at` is the transaction's start (a lower bound); a
 *      poller on its own connection reads new event ids every 10 ms, so an event committed after the
 *      last poll that missed it started and before the first poll that saw it answered. The latency
 *      is from the latest lower bound (recorded_at, or the last poll that missed it): an upper bound
 *      of the true figure; `fromVisibleMs` is from the first poll that saw it (a lower bound).
 *  (b) backlog: BENCH_BACKLOG (5,000) events recorded in one transaction (copies of the load's
 *      events, so the bodies are real), the deliveries/s from the first to the last answer;
 *  (c) the physical limit, same run, same receiver: the same bodies, signed the same way, POSTed
 *      straight to the receiver by a plain loop in a process of its own with the sender's
 *      per-endpoint concurrency (8) (bench/webhook-raw-posts.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { drainerSettings } from '../src/agents/drainer.js';
import { recordEvents } from '../src/db/repositories/domain-events.js';
import type { DomainEvent } from '../src/domain/events.js';
import { sleep } from '../src/dev/net.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { processingContext } from '../harness/agents.js';
import { stopTestStack, testStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { createTestEndpoint } from '../harness/webhooks.js';
import { generateWebhookSecret } from '../src/webhooks/signing.js';
import { CommitBounds } from './commit-bounds.js';
import {
  busyShare,
  CLK_TCK,
  cpuTicks,
  everyProcessTicks,
  percentile,
  postgresCpuMs,
  postmasterPid,
  processCpuMs,
  untilQuiet,
} from './stats.js';
import { openSessions, PRODUCTION_CADENCE, turnSender, type Ctx, type TurnSender } from './steady-sessions.js';
import { installQuietRuntime } from './runtime.js';

/** The agent load's levels (requests/s), each with sessions and an endpoint of its own. */
const LEVELS = (process.env.BENCH_RPS ?? '25,50,100,300').split(',').map(Number);
const LOAD = {
  seconds: Number(process.env.BENCH_SECONDS ?? 60),
  sessions: Number(process.env.BENCH_SESSIONS ?? 1000),
};
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 5000);
/** The steady state: deliveries/s are counted after the load's first seconds. */
const WARMUP_SECONDS = 10;
/** The sender's deliveries in flight per endpoint (src/webhooks/delivery.ts default). */
const CONCURRENCY = 8;
const POLL_MS = 10;
/** A gap in the event ids (a rolled-back transaction) is given up after this long. */
const HOLE_MS = 5_000;
const GOAL_P95_MS = 1_000;

/** Progress on stderr (stdout carries the result). */
const progress = (message: string) => process.stderr.write(`[webhook-delivery] ${new Date().toISOString()} ${message}\n`);

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return null;
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: percentile(sorted, 100) };
};

/**
 * Bounds every event's commit time: polls the ids above the lowest one not seen yet (ids are
 * allocated in insert order but commit in any order) every POLL_MS on a connection of its own.
 */
async function startVisibilityPoller(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const bounds = new CommitBounds(HOLE_MS);
  let running = true;
  const loop = (async () => {
    while (running) {
      const start = Date.now();
      const { rows } = await client.query<{ id: string }>('SELECT id FROM domain_events WHERE id > $1', [bounds.low]);
      bounds.poll(
        start,
        Date.now(),
        rows.map((r) => Number(r.id)),
      );
      await sleep(POLL_MS);
    }
  })();
  return {
    seen: bounds.seen,
    async stop() {
      running = false;
      await loop;
      await client.end();
    },
  };
}

const eventRow = z.object({
  event_id: z.number(),
  recorded_ms: z.number(),
  delivery_id: z.string().nullable(),
  status: z.string().nullable(),
  attempts: z.number().nullable(),
  first_attempt_ms: z.number().nullable(),
});

/** The organization's events (after `afterId`) with their delivery to the endpoint, if any. */
const eventsWithDeliveries = (ctx: Ctx, endpointId: string, afterId = 0) =>
  ctx.pool.any(sql.type(eventRow)`
    SELECT e.id::float8 AS event_id, (extract(epoch FROM e.recorded_at) * 1000)::float8 AS recorded_ms,
      d.id AS delivery_id, d.status, d.attempts,
      (SELECT (extract(epoch FROM min(a.attempted_at)) * 1000)::float8 FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)
        AS first_attempt_ms
    FROM domain_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.endpoint_id = ${endpointId}
    WHERE e.organization_id = ${ctx.org.organizationId} AND e.id > ${afterId}
    ORDER BY e.id`);

/**
 * Every event's delivery succeeded (the receiver answered 2xx), and that held for `stableMs`.
 * Polled once a second: while the endpoint has pending deliveries, with their count alone (the
 * pending index; the load's tail, or the backlog, is still being measured meanwhile), then with
 * the check of every event, which joins the organization's events with the deliveries. Run once a
 * second throughout, that check took 2 s a call under a 15,000-event backlog: 10 s of PostgreSQL's
 * time in the 17 s the backlog took, taken from the sender it measured.
 */
async function untilDelivered(ctx: Ctx, endpointId: string, afterId: number, timeoutMs: number, stableMs = 2000) {
  const started = Date.now();
  let doneSince: number | null = null;
  while (Date.now() - started < timeoutMs) {
    const sending = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'pending'`);
    const pending =
      sending > 0
        ? sending
        : await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM domain_events e
      WHERE e.organization_id = ${ctx.org.organizationId} AND e.id > ${afterId} AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.endpoint_id = ${endpointId} AND d.status = 'succeeded')`);
    if (pending > 0) doneSince = null;
    else {
      doneSince ??= Date.now();
      if (Date.now() - doneSince >= stableMs) return true;
    }
    await sleep(1000);
  }
  return false;
}

/** What the receiver process received (bench/webhook-receiver-process.ts). */
interface Arrival {
  id: string;
  answeredAt: number | null;
  verified: boolean;
  body: string;
}

/** The receiver in a process of its own (bench/webhook-receiver-process.ts). */
class RemoteReceiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly control: string,
  ) {}

  static async start(secret: string): Promise<RemoteReceiver> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', 'webhook-receiver-process.ts'), secret], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { url, control } = JSON.parse(line) as { url: string; control: string };
    return new RemoteReceiver(child, url, control);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  async received(): Promise<Arrival[]> {
    const res = await fetch(this.control);
    return (await res.json()) as Arrival[];
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await once(this.child, 'exit');
  }
}

/** The first 2xx answer per webhook-id, and how many requests came per id. */
function arrivals(received: readonly Arrival[]) {
  const first = new Map<string, number>();
  const count = new Map<string, number>();
  let unverified = 0;
  for (const r of received) {
    count.set(r.id, (count.get(r.id) ?? 0) + 1);
    if (r.answeredAt !== null && !first.has(r.id)) first.set(r.id, r.answeredAt);
    if (!r.verified) unverified++;
  }
  return { first, count, unverified };
}

/** Open loop: requests start on a fixed schedule whatever the latency of earlier ones. */
async function agentLoad(send: TurnSender, requestsPerSecond: number) {
  const total = requestsPerSecond * LOAD.seconds;
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / requestsPerSecond;
    await sleep(Math.max(0, due - performance.now()));
    inFlight.push(send(i % LOAD.sessions, Math.floor(i / LOAD.sessions) + 1));
  }
  await Promise.all(inFlight);
  return { requests: total, sendSeconds: (performance.now() - started) / 1000 };
}

/**
 * The CPU each process of the delivery path used over a phase, in cores (CPU seconds a second,
 * from /proc): the worker (the sender), the receiver, PostgreSQL (the postmaster and its
 * children), this process (the API and the benchmark's poller), and the machine's busy share.
 */
class ProcessCpu {
  private constructor(
    private readonly pids: { worker: number | undefined; receiver: number | undefined; postmaster: number },
    private readonly before: { worker: number; receiver: number; postgres: number; self: number; at: number },
    private readonly ticks: Awaited<ReturnType<typeof cpuTicks>>,
    private readonly all: Map<number, { name: string; ticks: number }>,
  ) {}

  static async start(worker: number | undefined, receiver: number | undefined): Promise<ProcessCpu> {
    const stack = await testStack();
    const postmaster = await postmasterPid(stack.postgres.dataDir);
    const pids = { worker, receiver, postmaster };
    return new ProcessCpu(pids, await ProcessCpu.read(pids), await cpuTicks(), await everyProcessTicks());
  }

  private static async read(pids: ProcessCpu['pids']) {
    const usage = process.cpuUsage();
    return {
      worker: await processCpuMs(pids.worker),
      receiver: await processCpuMs(pids.receiver),
      postgres: await postgresCpuMs(pids.postmaster),
      self: (usage.user + usage.system) / 1000,
      at: performance.now(),
    };
  }

  async cores() {
    const after = await ProcessCpu.read(this.pids);
    const ms = Math.max(1, after.at - this.before.at);
    const share = (k: 'worker' | 'receiver' | 'postgres' | 'self') => Number(((after[k] - this.before[k]) / ms).toFixed(3));
    return {
      worker: share('worker'),
      receiver: share('receiver'),
      postgres: share('postgres'),
      apiAndBenchmark: share('self'),
      machineBusyShare: busyShare(this.ticks, await cpuTicks()),
      busiestProcesses: [...(await everyProcessTicks()).entries()]
        .map(([pid, p]) => ({ pid, name: p.name, cores: ((p.ticks - (this.all.get(pid)?.ticks ?? 0)) * 1000) / CLK_TCK / ms }))
        .sort((a, b) => b.cores - a.cores)
        .slice(0, 6)
        .map((p) => ({ ...p, cores: Number(p.cores.toFixed(3)) })),
    };
  }
}

/**
 * The statements of the bench database since pg_stat_statements was reset, by total execution
 * time (the top 12, their text cut to 120 characters): where PostgreSQL's share of a phase goes.
 */
async function topStatements(ctx: Ctx) {
  const rows = await ctx.pool.any(sql.type(z.object({ query: z.string(), calls: z.number(), total_ms: z.number(), rows: z.number() }))`
    SELECT query, calls::float8 AS calls, total_exec_time AS total_ms, rows::float8 AS rows FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT ILIKE '%pg_stat_statements%'
    ORDER BY total_exec_time DESC LIMIT 12`);
  return rows.map((r) => ({
    query: r.query.replace(/\s+/g, ' ').trim().slice(0, 120),
    calls: r.calls,
    totalMs: Number(r.total_ms.toFixed(1)),
    meanMs: Number((r.total_ms / Math.max(1, r.calls)).toFixed(3)),
    rows: r.rows,
  }));
}

/** The raw POST loop (bench/webhook-raw-posts.ts) in a process of its own. */
async function rawPosts(url: string, secret: string, bodies: string[]) {
  const file = path.join(os.tmpdir(), `webhook-raw-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify({ url, secret, bodies, concurrency: CONCURRENCY, idPrefix: 'msg_raw_' }));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', 'webhook-raw-posts.ts'), file],
    {
      cwd: PROJECT_ROOT,
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(stdout) as { seconds: number; failed: number };
}

/**
 * One level of the agent load: sessions and an endpoint of its own (the earlier levels' endpoints
 * disabled), the sessions opened, the load, then every delivery; the figures of (a).
 */
async function steadyLevel(ctx: Ctx, receiver: RemoteReceiver, secret: string, poller: Poller, requestsPerSecond: number) {
  await ctx.pool.query(sql.unsafe`UPDATE webhook_endpoints SET enabled = false WHERE organization_id = ${ctx.org.organizationId}`);
  const endpoint = await createTestEndpoint(ctx.pool, ctx.org.organizationId, { url: receiver.url, eventTypes: null, secret });
  const afterId = await maxEventId(ctx);
  const app = await ctx.newApp();
  progress(`${requestsPerSecond} requests/s: opening ${LOAD.sessions} sessions`);
  const openStarted = performance.now();
  const send = turnSender(ctx, app, `webhooks-${requestsPerSecond}`);
  await openSessions(ctx, send, LOAD.sessions);
  const openSeconds = (performance.now() - openStarted) / 1000;
  progress('sessions open; waiting for a quiet machine');
  // Up to 2 minutes: the 1,000 openings leave processing behind them, which the load must not start on.
  const quietSeconds = await untilQuiet(0.3, 120_000);
  const beforeLoad = await maxEventId(ctx);
  progress(`load: ${requestsPerSecond} requests/s for ${LOAD.seconds} s`);
  const loadStartedAt = Date.now();
  // The machine's CPU over the steady window (after the warm-up): is there any left for the sender?
  let windowTicks: Awaited<ReturnType<typeof cpuTicks>> = null;
  const warm = setTimeout(() => void cpuTicks().then((t) => (windowTicks = t)), WARMUP_SECONDS * 1000);
  const load = await agentLoad(send, requestsPerSecond);
  clearTimeout(warm);
  const machineBusy = busyShare(windowTicks, await cpuTicks());
  const loadEndedAt = Date.now();
  progress('load sent; waiting for every delivery');
  const allDelivered = await untilDelivered(ctx, endpoint.id, afterId, 300_000);
  progress(`deliveries ${allDelivered ? 'complete' : 'NOT complete after 300 s'}`);
  const drainedAt = Date.now();
  const rows = await eventsWithDeliveries(ctx, endpoint.id, afterId);
  const { first, count, unverified } = arrivals(await receiver.received());
  const deliveryIds = new Set(rows.flatMap((r) => (r.delivery_id ? [r.delivery_id] : [])));
  // Ids the receiver got that no delivery of the organization has (earlier levels' are known).
  const known = new Set(
    await ctx.pool.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM webhook_deliveries WHERE organization_id = ${ctx.org.organizationId}`),
  );
  const exactness = {
    events: rows.length,
    withoutDelivery: rows.filter((r) => r.delivery_id === null).length,
    missing: rows.filter((r) => r.delivery_id === null || !first.has(r.delivery_id)).length,
    duplicates: [...count.entries()].filter(([id]) => deliveryIds.has(id)).reduce((sum, [, c]) => sum + c - 1, 0),
    unknownIds: [...count.keys()].filter((id) => !known.has(id)).length,
    unverifiedSignatures: unverified,
    retriedDeliveries: rows.filter((r) => (r.attempts ?? 0) > 1).length,
  };
  const measured = rows.filter((r) => r.event_id > beforeLoad && r.delivery_id && first.has(r.delivery_id));
  const latencies = measured.map((r) => {
    const answeredAt = first.get(r.delivery_id!)!;
    const visible = poller.seen.get(r.event_id);
    const committedAfter = Math.max(r.recorded_ms, visible?.after ?? 0);
    return {
      recordedMs: r.recorded_ms,
      upper: answeredAt - committedAfter,
      fromRecordedAt: answeredAt - r.recorded_ms,
      fromVisible: visible ? answeredAt - visible.by : null,
      commitWindow: visible ? visible.by - committedAfter : null,
      toFirstAttempt: r.first_attempt_ms === null ? null : r.first_attempt_ms - committedAfter,
      attemptToAnswer: r.first_attempt_ms === null ? null : answeredAt - r.first_attempt_ms,
    };
  });
  const nonNull = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);
  const byTenSeconds: number[][] = [];
  for (const l of latencies) (byTenSeconds[Math.max(0, Math.floor((l.recordedMs - loadStartedAt) / 10_000))] ??= []).push(l.upper);
  const steadyFrom = loadStartedAt + WARMUP_SECONDS * 1000;
  const window = (loadEndedAt - steadyFrom) / 1000;
  const deliveredInWindow = [...first.entries()].filter(([id, at]) => deliveryIds.has(id) && at >= steadyFrom && at <= loadEndedAt).length;
  const recordedInWindow = rows.filter((r) => r.recorded_ms >= steadyFrom && r.recorded_ms <= loadEndedAt).length;
  const latencyMs = summary(latencies.map((l) => l.upper));
  return {
    sessions: LOAD.sessions,
    sessionsOpenedPerSecond: Number((LOAD.sessions / openSeconds).toFixed(1)),
    quietAfterOpeningSeconds: quietSeconds,
    requestsPerSecond,
    seconds: LOAD.seconds,
    offeredRequestsPerSecond: Number((load.requests / load.sendSeconds).toFixed(1)),
    steadyWindowSeconds: Number(window.toFixed(1)),
    deliveriesPerSecond: Number((deliveredInWindow / window).toFixed(1)),
    eventsRecordedPerSecond: Number((recordedInWindow / window).toFixed(1)),
    machineBusyShareInWindow: machineBusy,
    drainAfterLoadSeconds: Number(((drainedAt - loadEndedAt) / 1000).toFixed(1)),
    allDelivered,
    measuredEvents: latencies.length,
    commitToReceiver2xxMs: latencyMs,
    commitToReceiver2xxP95MsBy10s: byTenSeconds.map((xs) => summary(xs)?.p95 ?? null),
    goalP95Ms: GOAL_P95_MS,
    goalMet: latencyMs !== null && latencyMs.p95 <= GOAL_P95_MS && exactness.missing === 0 && exactness.duplicates === 0,
    fromVisibleMs: summary(nonNull(latencies.map((l) => l.fromVisible))),
    fromRecordedAtMs: summary(latencies.map((l) => l.fromRecordedAt)),
    commitWindowMs: summary(nonNull(latencies.map((l) => l.commitWindow))),
    eventsNotSeenByPoller: latencies.filter((l) => l.fromVisible === null).length,
    breakdownMs: {
      commitToFirstAttempt: summary(nonNull(latencies.map((l) => l.toFirstAttempt))),
      firstAttemptToReceiver2xx: summary(nonNull(latencies.map((l) => l.attemptToAnswer))),
    },
    exactness,
    pollIntervalMs: POLL_MS,
    commitTime:
      'latencies run from the latest lower bound of the commit (recorded_at, the transaction start, or the start of the last 10 ms poll that did not see the event): an upper bound; fromVisibleMs from the first poll that saw it: a lower bound',
  };
}

const maxEventId = (ctx: Ctx) =>
  ctx.pool.oneFirst(sql.type(z.object({ id: z.number() }))`SELECT coalesce(max(id), 0)::float8 AS id FROM domain_events`);

type Poller = Awaited<ReturnType<typeof startVisibilityPoller>>;

export async function benchWebhookDelivery(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const ctx = await processingContext({ credits: 10_000_000, worker: false, env: PRODUCTION_CADENCE });
  const secret = generateWebhookSecret();
  const receiver = await RemoteReceiver.start(secret);
  const poller = await startVisibilityPoller(ctx.databaseUrl);
  const worker = await startWorkerProcess({
    databaseUrl: ctx.databaseUrl,
    taskQueue: ctx.taskQueue,
    drainer: drainerSettings(ctx.api.deps.config),
    webhookWaker: true,
  });
  try {
    // (a) Each level: the sessions are open first (as in agent-processing), then the steady load.
    const steadyLoad = [];
    for (const rps of LEVELS) steadyLoad.push(await steadyLevel(ctx, receiver, secret, poller, rps));
    const endpoint = {
      id: await ctx.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM webhook_endpoints WHERE organization_id = ${ctx.org.organizationId} AND enabled`),
    };

    // (b) A backlog: copies of the load's events (real bodies), recorded in one transaction.
    const templates = await ctx.pool.any(sql.type(
      z.object({ type: z.string(), subject_id: z.string(), payload: z.record(z.string(), z.unknown()) }),
    )`
      SELECT type, subject_id, payload FROM domain_events WHERE organization_id = ${ctx.org.organizationId}
      ORDER BY id DESC LIMIT ${BACKLOG}`);
    const events = Array.from({ length: BACKLOG }, (_, i) => {
      const t = templates[i % templates.length]!;
      return {
        type: t.type,
        organizationId: ctx.org.organizationId,
        subjectId: t.subject_id,
        payload: t.payload,
      } as unknown as DomainEvent;
    });
    const beforeBacklog = await maxEventId(ctx);
    // What the steady load set going (its sessions' workflows closing) is not billed to the backlog.
    const quietBeforeBacklog = await untilQuiet();
    progress(`backlog: ${BACKLOG} events in one transaction`);
    await ctx.pool.query(sql.unsafe`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
    await ctx.pool.query(sql.unsafe`SELECT pg_stat_statements_reset()`);
    const cpu = await ProcessCpu.start(worker.pid, receiver.pid);
    await ctx.pool.transaction((tx) => recordEvents(tx, events));
    const committedAt = Date.now();
    const backlogDelivered = await untilDelivered(ctx, endpoint.id, beforeBacklog, 180_000, 500);
    const backlogCpu = await cpu.cores();
    const backlogStatements = await topStatements(ctx);
    const backlogRows = await eventsWithDeliveries(ctx, endpoint.id, beforeBacklog);
    const received = await receiver.received();
    const after = arrivals(received);
    const backlogIds = new Set(backlogRows.flatMap((r) => (r.delivery_id ? [r.delivery_id] : [])));
    const answers = [...backlogIds].flatMap((id) => (after.first.has(id) ? [after.first.get(id)!] : [])).sort((a, b) => a - b);
    const sendingSeconds = (answers.at(-1)! - answers[0]!) / 1000;
    const bodies = received.filter((r) => backlogIds.has(r.id)).map((r) => r.body);
    const backlog = {
      events: BACKLOG,
      allDelivered: backlogDelivered,
      delivered: answers.length,
      missing: backlogRows.filter((r) => !r.delivery_id || !after.first.has(r.delivery_id)).length,
      duplicates: [...after.count.entries()].filter(([id]) => backlogIds.has(id)).reduce((sum, [, c]) => sum + c - 1, 0),
      commitToFirst2xxMs: Math.round(answers[0]! - committedAt),
      commitToLast2xxSeconds: Number(((answers.at(-1)! - committedAt) / 1000).toFixed(2)),
      deliveriesPerSecond: Number(((answers.length - 1) / sendingSeconds).toFixed(1)),
      bodyBytesMean: Math.round(bodies.reduce((s, b) => s + Buffer.byteLength(b), 0) / Math.max(1, bodies.length)),
      cpuCores: backlogCpu,
      quietWaitSeconds: quietBeforeBacklog,
      topStatementsByTotalTime: backlogStatements,
    };

    // (c) The physical limit: the same bodies, signed, straight to the same receiver.
    progress('raw signed POSTs');
    const rawCpu = await ProcessCpu.start(undefined, receiver.pid);
    const raw = await rawPosts(receiver.url, secret, bodies);
    const rawCpuCores = await rawCpu.cores();
    const rawPerSecond = bodies.length / raw.seconds;
    return {
      name: 'webhook-delivery',
      steadyLoad,
      backlog,
      rawPosts: {
        posts: bodies.length,
        concurrency: CONCURRENCY,
        failed: raw.failed,
        seconds: Number(raw.seconds.toFixed(2)),
        postsPerSecond: Number(rawPerSecond.toFixed(1)),
        cpuCores: {
          receiver: rawCpuCores.receiver,
          postgres: rawCpuCores.postgres,
          machineBusyShare: rawCpuCores.machineBusyShare,
          busiestProcesses: rawCpuCores.busiestProcesses,
        },
      },
      ratio: { backlogDeliveriesOverRawPosts: Number((backlog.deliveriesPerSecond / rawPerSecond).toFixed(3)) },
    };
  } finally {
    await killWorkerProcess(worker);
    await poller.stop();
    await receiver.close();
    await ctx.close();
    await stopTestStack();
  }
}
