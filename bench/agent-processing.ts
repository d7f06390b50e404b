/**
 * Agent session processing, end to end on the real stack (API, Temporal dev server, worker with
 * the local signal extractor, PostgreSQL):
 *  (a) lag: BENCH_SESSIONS (1,000) sessions are opened (one turn each, processed, workflows running;
 *      the rate at which that happens is reported apart), then a steady open-loop load at several
 *      rates (BENCH_RPS requests/s, round-robin over the sessions, each one user message and one
 *      finalized assistant response) for BENCH_SECONDS; for every ingest, the time from its 202
 *      response until the session's processedThroughSequence reaches its last event, p50/p95 (DB
 *      polled every 20 ms);
 *  (b) the burst: the same number of new sessions opened in about 4 s with the load right behind
 *      them (BURST), lag p95 by minute, the first included;
 *  (c) sustained throughput: a backlog ingested while no worker runs, then the time a worker takes
 *      to process all of it (watermarks, metering, explicit signals, and every analysis paid for);
 *      then the same with two worker processes sharing the drainer shards (issue 34: the total
 *      must be at least one worker's rate).
 */
import { drainerSettings } from '../src/agents/drainer.js';
import { sessionDrainerWorkflowId } from '../workflows/session-drainer/contract.js';
import { once } from 'node:events';
import { sql } from 'slonik';
import { z } from 'zod';
import { sleep } from '../src/dev/net.js';
import { assistantMessage, feedbackEvent, processingContext, sessionRequest, userMessage } from '../harness/agents.js';
import { stopTestStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { busyShare, CLK_TCK, cpuTicks, everyProcessTicks, percentile, untilQuiet } from './stats.js';
import { openSessions, PRODUCTION_CADENCE, TEXT, turnSender, type Ctx } from './steady-sessions.js';
import { installQuietRuntime } from './runtime.js';

/** The goal by default: 300 requests/s for 5 minutes over 1,000 open sessions (0 seconds: no steady phase). */
const STEADY = {
  sessions: Number(process.env.BENCH_SESSIONS ?? 1000),
  seconds: Number(process.env.BENCH_SECONDS ?? 300),
  eventsPerRequest: 2,
};
/** Offered loads, in ingest requests per second (two events each). */
const LEVELS = (process.env.BENCH_RPS ?? '300').split(',').map(Number);
/**
 * The burst: BENCH_SESSIONS new sessions opened at BENCH_BURST_OPEN_RATE per second (1,000 in
 * 4 s), with the steady load (the first of BENCH_RPS) starting right behind them, for
 * BENCH_BURST_SECONDS; its lag is counted by the minute from the first session's open, the
 * opening turns included (0 seconds: no burst phase).
 */
const BURST = {
  openPerSecond: Number(process.env.BENCH_BURST_OPEN_RATE ?? 250),
  seconds: Number(process.env.BENCH_BURST_SECONDS ?? 120),
};
/**
 * The backlog: BENCH_BACKLOG_SESSIONS sessions of BENCH_TURNS turns (3 events each). 300 x 100 makes
 * a drain of about 25 s, long enough that the shards' hand-over between two starting workers (they
 * count each other every 5 s) is not most of it.
 */
const BACKLOG = { sessions: Number(process.env.BENCH_BACKLOG_SESSIONS ?? 300), turns: Number(process.env.BENCH_TURNS ?? 100) };

const watermarks = (ctx: Ctx, ids: string[]) =>
  ctx.pool.any(sql.type(z.object({ id: z.string(), w: z.number().nullable() }))`
  SELECT id, processed_through_sequence AS w FROM agent_sessions WHERE id = ANY(${sql.array(ids, 'uuid')})`);

/**
 * The lag of a load of turns: every ingest's time from its 202 until its session's watermark
 * reaches its last event. `steady`: the sessions are opened first (one turn each, processed, their
 * workflows running, the machine quiet), as in production, where sessions last far longer than a
 * benchmark, and session starts are timed apart. `burst`: the sessions are opened at
 * BURST.openPerSecond with the load right behind them, and the opening turns count.
 */
async function turnLag(ctx: Ctx, requestsPerSecond: number, mode: 'steady' | 'burst', roles: Roles) {
  const app = await ctx.newApp();
  const pending = new Map<string, { sequence: number; at: number }[]>();
  const lags: number[] = [];
  /** Lags by the minute they were answered in (from the load's start, or the burst's): flat, or growing. */
  const byMinute: number[][] = [];
  /** By minute, the sessions with an ingest over the goal (2 s): the few, or all of them. */
  const slowSessionsByMinute: Set<string>[] = [];
  const ingestMs: number[] = [];
  let polling = true;
  let clockStarted = Infinity;
  const poller = (async () => {
    while (polling || [...pending.values()].some((p) => p.length)) {
      const now = performance.now();
      // Only the sessions with an ingest waiting: the poller shares the API's process and core.
      const waiting = [...pending].filter(([, list]) => list.length).map(([id]) => id);
      for (const row of waiting.length ? await watermarks(ctx, waiting) : []) {
        const list = pending.get(row.id) ?? [];
        while (list.length && row.w !== null && row.w >= list[0]!.sequence) {
          const { at } = list.shift()!;
          lags.push(now - at);
          const minute = Math.floor(Math.max(0, at - clockStarted) / 60_000);
          (byMinute[minute] ??= []).push(now - at);
          if (now - at > 2000) (slowSessionsByMinute[minute] ??= new Set()).add(row.id);
        }
      }
      await sleep(20);
    }
  })();
  const cluster = new ClusterByMinute(ctx, () => clockStarted, roles);
  const send = turnSender(ctx, app, `${mode}-${requestsPerSecond}`);
  /** Sends turn `round` of session `s` (events 2·round+1 and +2), its lag then awaited by the poller. */
  const tracked = async (s: number, round: number) => {
    const t = performance.now();
    const sessionId = await send(s, round);
    const done = performance.now();
    ingestMs.push(done - t);
    const list = pending.get(sessionId) ?? [];
    list.push({ sequence: round * 2 + 2, at: done });
    list.sort((x, y) => x.sequence - y.sequence);
    pending.set(sessionId, list);
  };
  /** Sends `count` requests on a fixed schedule (open loop), whatever the latency of earlier ones. */
  const openLoop = async (count: number, perSecond: number, request: (i: number) => Promise<void>) => {
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      await sleep(Math.max(0, started + (i * 1000) / perSecond - performance.now()));
      inFlight.push(request(i));
    }
    return inFlight;
  };
  let openSeconds: number;
  let settleSeconds = 0;
  const inFlight: Promise<void>[] = [];
  const warmStart = performance.now();
  if (mode === 'steady') {
    await openSessions(ctx, send, STEADY.sessions);
    openSeconds = (performance.now() - warmStart) / 1000;
    // The workflows' first runs (started by the drainer's signals) finish before the load starts.
    settleSeconds = await untilQuiet();
  } else {
    clockStarted = warmStart;
    inFlight.push(...(await openLoop(STEADY.sessions, BURST.openPerSecond, (s) => tracked(s, 0))));
    openSeconds = (performance.now() - warmStart) / 1000;
  }
  const seconds = mode === 'steady' ? STEADY.seconds : BURST.seconds;
  const total = requestsPerSecond * seconds;
  const started = performance.now();
  if (mode === 'steady') clockStarted = started;
  // Round-robin over the sessions: request i is turn floor(i / sessions) + 1 of session i mod sessions.
  inFlight.push(...(await openLoop(total, requestsPerSecond, (i) => tracked(i % STEADY.sessions, Math.floor(i / STEADY.sessions) + 1))));
  await Promise.all(inFlight);
  const sendSeconds = (performance.now() - started) / 1000;
  polling = false;
  await poller;
  const clusterByMinute = await cluster.stop();
  const drainers = await drainerHandOvers(ctx, Date.now() - (performance.now() - clockStarted));
  const sorted = lags.sort((a, b) => a - b);
  const ingestSorted = ingestMs.sort((a, b) => a - b);
  const events = total * STEADY.eventsPerRequest;
  return {
    mode,
    sessions: STEADY.sessions,
    sessionsOpenedPerSecond: Number((STEADY.sessions / openSeconds).toFixed(1)),
    ...(mode === 'steady' ? { quietAfterOpeningSeconds: settleSeconds } : { openingTurnsCounted: true }),
    requestsPerSecond,
    seconds,
    offeredEventsPerSecond: Number((events / sendSeconds).toFixed(1)),
    ingests: lags.length,
    lagMs: { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: percentile(sorted, 100) },
    lagP95MsByMinute: byMinute.map((m) =>
      percentile(
        m.sort((a, b) => a - b),
        95,
      ),
    ),
    sessionsOver2sByMinute: byMinute.map((_, i) => slowSessionsByMinute[i]?.size ?? 0),
    ingestLatencyMs: { p50: percentile(ingestSorted, 50), p95: percentile(ingestSorted, 95) },
    pollIntervalMs: 20,
    clusterByMinute,
    drainerHandOvers: drainers,
  };
}

const clusterSample = z.object({
  checkpoints: z.number(),
  buffers_written: z.number(),
  wal_bytes: z.number(),
  autovacuum_workers: z.number(),
  autovacuum_tables: z.string().nullable(),
});
const statementSample = z.object({ queryid: z.string(), query: z.string(), calls: z.number(), total_ms: z.number() });

/** Processes named by role: the worker, the benchmark's own (API, load, poller), else the command name (postgres, temporal, ...). */
type Roles = { worker?: number };
const roleOf = (pid: number, name: string, roles: Roles) =>
  pid === roles.worker ? 'worker' : pid === process.pid ? 'apiAndBenchmark' : name;

/**
 * What the machine did in each minute of a load, on the clock its lags are counted by (the lag
 * candidates beside the lag p95 by minute): PostgreSQL's checkpoints begun and the buffers they
 * wrote, WAL written, autovacuum workers seen running (sampled every SAMPLE_MS, as worker-seconds)
 * and on which tables; the machine's busy share; the CPU of each process by role, in cores (the
 * worker, the benchmark's own process, PostgreSQL's backends summed, Temporal's server); and the
 * statements that took the most execution time in that minute (pg_stat_statements).
 */
class ClusterByMinute {
  static readonly SAMPLE_MS = 2000;
  private readonly minutes: {
    checkpoints: number;
    checkpointBuffers: number;
    walMiB: number;
    autovacuumWorkerSeconds: number;
    autovacuumTables: Set<string>;
    busy: { before: Awaited<ReturnType<typeof cpuTicks>>; after: Awaited<ReturnType<typeof cpuTicks>> };
    sampledMs: number;
    cpuMsByRole: Map<string, number>;
    statements: Map<string, { query: string; calls: number; ms: number }>;
  }[] = [];
  private last: {
    s: z.infer<typeof clusterSample>;
    at: number;
    procs: Awaited<ReturnType<typeof everyProcessTicks>>;
    statements: Map<string, z.infer<typeof statementSample>>;
  } | null = null;
  private readonly loop: Promise<void>;
  private running = true;

  constructor(
    private readonly ctx: Ctx,
    private readonly clock: () => number,
    private readonly roles: Roles,
  ) {
    this.loop = (async () => {
      while (this.running) {
        await this.sample().catch(() => undefined);
        await sleep(ClusterByMinute.SAMPLE_MS);
      }
    })();
  }

  private async sample(): Promise<void> {
    const s = await this.ctx.pool.one(sql.type(clusterSample)`
      SELECT (c.num_timed + c.num_requested)::float8 AS checkpoints, c.buffers_written::float8 AS buffers_written,
        (SELECT wal_bytes::float8 FROM pg_stat_wal) AS wal_bytes,
        (SELECT count(*)::float8 FROM pg_stat_activity WHERE backend_type = 'autovacuum worker') AS autovacuum_workers,
        (SELECT string_agg(DISTINCT regexp_replace(query, '^autovacuum: ', ''), '; ') FROM pg_stat_activity
          WHERE backend_type = 'autovacuum worker') AS autovacuum_tables
      FROM pg_stat_checkpointer c`);
    // Empty where the extension is not loaded (the other figures still count).
    const statements = new Map(
      (
        await this.ctx.pool
          .any(
            sql.type(statementSample)`
          SELECT queryid::text AS queryid, query, calls::float8 AS calls, total_exec_time AS total_ms FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel
            AND query NOT ILIKE '%pg_stat_%'`,
          )
          .catch(() => [])
      ).map((r) => [r.queryid, r]),
    );
    const at = performance.now();
    const ticks = await cpuTicks();
    const procs = await everyProcessTicks();
    const started = this.clock();
    if (at >= started && this.last) {
      const m = (this.minutes[Math.floor((at - started) / 60_000)] ??= {
        checkpoints: 0,
        checkpointBuffers: 0,
        walMiB: 0,
        autovacuumWorkerSeconds: 0,
        autovacuumTables: new Set(),
        busy: { before: ticks, after: ticks },
        sampledMs: 0,
        cpuMsByRole: new Map(),
        statements: new Map(),
      });
      m.checkpoints += s.checkpoints - this.last.s.checkpoints;
      m.checkpointBuffers += s.buffers_written - this.last.s.buffers_written;
      m.walMiB += (s.wal_bytes - this.last.s.wal_bytes) / 2 ** 20;
      m.autovacuumWorkerSeconds += (s.autovacuum_workers * (at - this.last.at)) / 1000;
      for (const t of s.autovacuum_tables?.split('; ') ?? []) m.autovacuumTables.add(t);
      m.busy.after = ticks;
      m.sampledMs += at - this.last.at;
      for (const [pid, p] of procs) {
        // A process born within the interval counts from zero.
        const ms = ((p.ticks - (this.last.procs.get(pid)?.ticks ?? 0)) * 1000) / CLK_TCK;
        const role = roleOf(pid, p.name, this.roles);
        if (ms > 0) m.cpuMsByRole.set(role, (m.cpuMsByRole.get(role) ?? 0) + ms);
      }
      for (const [id, r] of statements) {
        const before = this.last.statements.get(id);
        const ms = r.total_ms - (before?.total_ms ?? 0);
        if (ms <= 0) continue;
        const t = m.statements.get(id) ?? { query: r.query, calls: 0, ms: 0 };
        t.calls += r.calls - (before?.calls ?? 0);
        t.ms += ms;
        m.statements.set(id, t);
      }
    }
    this.last = { s, at, procs, statements };
  }

  async stop() {
    this.running = false;
    await this.loop;
    return this.minutes.map((m) => ({
      checkpoints: m.checkpoints,
      checkpointBuffersWritten: m.checkpointBuffers,
      walMiB: Number(m.walMiB.toFixed(1)),
      autovacuumWorkerSeconds: Number(m.autovacuumWorkerSeconds.toFixed(0)),
      autovacuumTables: [...m.autovacuumTables].sort(),
      machineBusyShare: busyShare(m.busy.before, m.busy.after),
      cpuCoresByProcess: Object.fromEntries(
        [...m.cpuMsByRole]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6)
          .map(([role, ms]) => [role, Number((ms / Math.max(1, m.sampledMs)).toFixed(2))]),
      ),
      topStatements: [...m.statements.values()]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 4)
        .map((t) => ({
          query: t.query.replace(/\s+/g, ' ').trim().slice(0, 100),
          calls: t.calls,
          totalMs: Math.round(t.ms),
          meanMs: Number((t.ms / Math.max(1, t.calls)).toFixed(2)),
        })),
    }));
  }
}

/**
 * Each drainer shard's calls of its drain activity (a call runs about a minute, then the shard's
 * workflow schedules the next): for each hand-over in the window, when it began (seconds on the
 * load's clock) and how long the shard drained nothing, split into the workflow task's wait, its
 * run, and the next call's wait in the activity task queue (from the shards' histories).
 */
async function drainerHandOvers(ctx: Ctx, windowStartedAtMs: number) {
  // The shards the worker was started with (production's AGENT_DRAIN_SHARDS).
  const shards = ctx.api.deps.config.agents.drainShards;
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    t ? Number(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;
  const byShard = [];
  for (let shard = 0; shard < shards; shard++) {
    const id = sessionDrainerWorkflowId(ctx.taskQueue, shard, shards);
    // A history that cannot be read leaves the shard's list empty, not the run without its figures.
    const events =
      (
        await ctx.api.temporal.client.workflow
          .getHandle(id)
          .fetchHistory()
          .catch(() => null)
      )?.events ?? [];
    const handOvers = [];
    let completedAt: number | null = null;
    let wft: { scheduled?: number; started?: number; completed?: number } = {};
    let scheduledAt: number | null = null;
    for (const e of events) {
      const at = ms(e.eventTime);
      if (e.activityTaskCompletedEventAttributes || e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes) {
        completedAt = at;
        wft = {};
      } else if (e.workflowTaskScheduledEventAttributes && completedAt !== null) wft.scheduled ??= at;
      else if (e.workflowTaskStartedEventAttributes && completedAt !== null) wft.started = at;
      else if (e.workflowTaskCompletedEventAttributes && completedAt !== null) wft.completed = at;
      else if (e.activityTaskScheduledEventAttributes) scheduledAt = at;
      else if (e.activityTaskStartedEventAttributes && completedAt !== null && scheduledAt !== null && completedAt >= windowStartedAtMs) {
        handOvers.push({
          atSeconds: Number(((completedAt - windowStartedAtMs) / 1000).toFixed(1)),
          drainedNothingMs: Math.round(at - completedAt),
          workflowTaskWaitMs: Math.round((wft.started ?? NaN) - (wft.scheduled ?? NaN)),
          workflowTaskRunMs: Math.round((wft.completed ?? NaN) - (wft.started ?? NaN)),
          activityWaitMs: Math.round(at - scheduledAt),
        });
        completedAt = null;
      }
    }
    byShard.push({ shard: shard + 1, handOvers });
  }
  return byShard;
}

/**
 * The time `workers` worker processes take to process a backlog ingested while none ran. Each holds
 * its share of the task queue's drainer shards (AGENT_DRAIN_SHARDS, production's default), as
 * src/main/worker.ts does; the workers start together, and the rate is counted from when all are ready.
 */
async function backlogThroughput(ctx: Ctx, workers: number) {
  const app = await ctx.newApp();
  const events = Array.from({ length: BACKLOG.turns }, (_, t) => [
    userMessage(3 * t + 1, `${TEXT}${t}`),
    assistantMessage(3 * t + 2, `answer ${t}`),
    feedbackEvent(3 * t + 3, `e${3 * t + 2}`, t % 2 ? 'positive' : 'negative'),
  ]).flat();
  const last = events.at(-1)!.sequence;
  const ids: string[] = [];
  for (let s = 0; s < BACKLOG.sessions; s++) {
    const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: `backlog-${s}`, status: 'ended' }));
    ids.push((res.body as { sessionId: string }).sessionId);
  }
  const started = performance.now();
  const procs = await Promise.all(
    Array.from({ length: workers }, () =>
      startWorkerProcess({
        databaseUrl: ctx.databaseUrl,
        taskQueue: ctx.taskQueue,
        drainer: drainerSettings(ctx.api.deps.config),
        drainShards: ctx.api.deps.config.agents.drainShards,
      }),
    ),
  );
  // The rate is counted from when every worker is ready (processes starting together on 2 cores
  // take longer than one); what was processed by then is left out of it.
  const ready = performance.now();
  const processedAtReady = (await watermarks(ctx, ids)).reduce((sum, r) => sum + (r.w ?? 0), 0);
  for (;;) {
    const rows = await watermarks(ctx, ids);
    const queued = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_analysis_jobs WHERE status = 'queued' AND session_id = ANY(${sql.array(ids, 'uuid')})`);
    if (rows.every((r) => r.w === last) && queued === 0) break;
    await sleep(100);
  }
  const done = performance.now();
  await Promise.all(procs.map(killWorkerProcess));
  const total = BACKLOG.sessions * events.length;
  const analyses = BACKLOG.sessions * BACKLOG.turns;
  const seconds = (done - ready) / 1000;
  return {
    workers,
    shards: ctx.api.deps.config.agents.drainShards,
    sessions: BACKLOG.sessions,
    events: total,
    analysedResponses: analyses,
    workerStartSeconds: Number(((ready - started) / 1000).toFixed(2)),
    processedBeforeAllReady: processedAtReady,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Number(((total - processedAtReady) / seconds).toFixed(1)),
    analysesPerSecond: Number(((analyses * (total - processedAtReady)) / total / seconds).toFixed(1)),
  };
}

/** One worker, then two, each on a backlog of its own in a fresh database and task queue, in the same run. */
async function backlogByWorkers() {
  const byWorkers = [];
  for (const workers of [1, 2]) {
    const ctx = await processingContext({ credits: 10_000_000, worker: false, env: PRODUCTION_CADENCE });
    try {
      byWorkers.push(await backlogThroughput(ctx, workers));
    } finally {
      await ctx.close();
    }
  }
  const [one, two] = byWorkers;
  return { ...one!, twoWorkers: two!, twoOverOne: Number((two!.eventsPerSecond / one!.eventsPerSecond).toFixed(2)) };
}

export async function benchAgentProcessing(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  // The worker runs in a process of its own, as in production (API and worker scale apart).
  const steadyCtx = await processingContext({ credits: 10_000_000, worker: false, env: PRODUCTION_CADENCE });
  const worker = await startWorkerProcess({
    databaseUrl: steadyCtx.databaseUrl,
    taskQueue: steadyCtx.taskQueue,
    drainer: drainerSettings(steadyCtx.api.deps.config),
    // Production's shards (AGENT_DRAIN_SHARDS), this worker holding them all beside its LISTEN wakeups, as src/main/worker.ts does.
    drainShards: steadyCtx.api.deps.config.agents.drainShards,
  });
  const roles = { worker: worker.pid };
  await steadyCtx.pool.query(sql.unsafe`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
  const steady = [];
  let burst;
  try {
    // The burst first: its sessions are new to a quiet stack, as after a deploy or a customer's launch.
    if (BURST.seconds > 0) burst = await turnLag(steadyCtx, LEVELS[0]!, 'burst', roles);
    if (STEADY.seconds > 0) for (const rps of LEVELS) steady.push(await turnLag(steadyCtx, rps, 'steady', roles));
  } finally {
    if (process.env.BENCH_PROFILE) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await killWorkerProcess(worker);
    await steadyCtx.close();
  }
  let backlog;
  try {
    backlog = await backlogByWorkers();
  } finally {
    await stopTestStack();
  }
  return { name: 'agent-processing', ...(burst ? { burst } : {}), steadyLoad: steady, backlog };
}
