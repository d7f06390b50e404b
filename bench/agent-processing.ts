/**
 * Agent session processing, end to end on the real stack (API, Temporal dev server, worker with
 * the local signal extractor, PostgreSQL):
 *  (a) lag: BENCH_SESSIONS (1,000) sessions are opened (one turn each, processed, workflows running;
 *      the rate at which that happens is reported apart), then a steady open-loop load at several
 *      rates (BENCH_RPS requests/s, round-robin over the sessions, each one user message and one
 *      finalized assistant response) for BENCH_SECONDS; for every ingest, the time from its 202
 *      response until the session's processedThroughSequence reaches its last event, p50/p95 (DB
 *      polled every 20 ms);
 *  (b) sustained throughput: a backlog ingested while no worker runs, then the time a worker takes
 *      to process all of it (watermarks, metering, explicit signals, and every analysis paid for).
 */
import { drainerSettings } from '../src/agents/drainer.js';
import { once } from 'node:events';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { sql } from 'slonik';
import { z } from 'zod';
import { sleep } from '../src/dev/net.js';
import { assistantMessage, feedbackEvent, processingContext, sessionRequest, userMessage } from '../harness/agents.js';
import { stopTestStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { percentile, untilQuiet } from './stats.js';
import { openSessions, PRODUCTION_CADENCE, TEXT, turnSender, type Ctx } from './steady-sessions.js';

/** The goal by default: 300 requests/s for 5 minutes over 1,000 open sessions. */
const STEADY = {
  sessions: Number(process.env.BENCH_SESSIONS ?? 1000),
  seconds: Number(process.env.BENCH_SECONDS ?? 300),
  eventsPerRequest: 2,
};
/** Offered loads, in ingest requests per second (two events each). */
const LEVELS = (process.env.BENCH_RPS ?? '300').split(',').map(Number);
const BACKLOG = { sessions: 100, turns: Number(process.env.BENCH_TURNS ?? 100) };

const watermarks = (ctx: Ctx, ids: string[]) =>
  ctx.pool.any(sql.type(z.object({ id: z.string(), w: z.number().nullable() }))`
  SELECT id, processed_through_sequence AS w FROM agent_sessions WHERE id = ANY(${sql.array(ids, 'uuid')})`);

/** Every session processed through its first turn, its analyses done and its workflow told. */
async function steadyLag(ctx: Ctx, requestsPerSecond: number) {
  const app = await ctx.newApp();
  const pending = new Map<string, { sequence: number; at: number }[]>();
  const lags: number[] = [];
  /** Lags by the minute of the load they were answered in: flat, or growing. */
  const byMinute: number[][] = [];
  const ingestMs: number[] = [];
  const ids = new Set<string>();
  let polling = true;
  let loadStarted = Infinity;
  const poller = (async () => {
    while (polling || [...pending.values()].some((p) => p.length)) {
      const now = performance.now();
      for (const row of await watermarks(ctx, [...ids])) {
        const list = pending.get(row.id) ?? [];
        while (list.length && row.w !== null && row.w >= list[0]!.sequence) {
          const { at } = list.shift()!;
          lags.push(now - at);
          (byMinute[Math.floor(Math.max(0, at - loadStarted) / 60_000)] ??= []).push(now - at);
        }
      }
      await sleep(20);
    }
  })();
  // The sessions are open first (one turn each, processed, their workflows running), as in
  // production, where sessions last far longer than a benchmark: session starts are timed apart.
  const send = turnSender(ctx, app, `steady-${requestsPerSecond}`);
  const warmStart = performance.now();
  await openSessions(ctx, send, STEADY.sessions);
  const openSeconds = (performance.now() - warmStart) / 1000;
  // The workflows' first runs (started by the drainer's signals) finish before the load starts.
  const settleSeconds = await untilQuiet();
  // Open loop: requests start on a fixed schedule (round-robin over the sessions), whatever the
  // latency of earlier ones, so that the load stays steady instead of slowing down with the system.
  const total = requestsPerSecond * STEADY.seconds;
  const started = performance.now();
  loadStarted = started;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const s = i % STEADY.sessions;
    const round = Math.floor(i / STEADY.sessions) + 1;
    const due = started + (i * 1000) / requestsPerSecond;
    await sleep(Math.max(0, due - performance.now()));
    inFlight.push(
      (async () => {
        const seq = round * 2 + 1;
        const t = performance.now();
        const sessionId = await send(s, round);
        const done = performance.now();
        ingestMs.push(done - t);
        ids.add(sessionId);
        const list = pending.get(sessionId) ?? [];
        list.push({ sequence: seq + 1, at: done });
        list.sort((x, y) => x.sequence - y.sequence);
        pending.set(sessionId, list);
      })(),
    );
  }
  await Promise.all(inFlight);
  const sendSeconds = (performance.now() - started) / 1000;
  polling = false;
  await poller;
  const sorted = lags.sort((a, b) => a - b);
  const ingestSorted = ingestMs.sort((a, b) => a - b);
  const events = total * STEADY.eventsPerRequest;
  return {
    sessions: STEADY.sessions,
    sessionsOpenedPerSecond: Number((STEADY.sessions / openSeconds).toFixed(1)),
    quietAfterOpeningSeconds: settleSeconds,
    requestsPerSecond,
    seconds: STEADY.seconds,
    offeredEventsPerSecond: Number((events / sendSeconds).toFixed(1)),
    ingests: lags.length,
    lagMs: { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: percentile(sorted, 100) },
    lagP95MsByMinute: byMinute.map((m) =>
      percentile(
        m.sort((a, b) => a - b),
        95,
      ),
    ),
    ingestLatencyMs: { p50: percentile(ingestSorted, 50), p95: percentile(ingestSorted, 95) },
    pollIntervalMs: 20,
  };
}

async function backlogThroughput(ctx: Ctx) {
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
  const worker = await startWorkerProcess({
    databaseUrl: ctx.databaseUrl,
    taskQueue: ctx.taskQueue,
    drainer: drainerSettings(ctx.api.deps.config),
  });
  for (;;) {
    const rows = await watermarks(ctx, ids);
    const queued = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_analysis_jobs WHERE status = 'queued' AND session_id = ANY(${sql.array(ids, 'uuid')})`);
    if (rows.every((r) => r.w === last) && queued === 0) break;
    await sleep(100);
  }
  const seconds = (performance.now() - started) / 1000;
  await killWorkerProcess(worker);
  const total = BACKLOG.sessions * events.length;
  const analyses = BACKLOG.sessions * BACKLOG.turns;
  return {
    sessions: BACKLOG.sessions,
    events: total,
    analysedResponses: analyses,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Number((total / seconds).toFixed(1)),
    analysesPerSecond: Number((analyses / seconds).toFixed(1)),
    includesWorkerProcessStartSeconds: true,
  };
}

export async function benchAgentProcessing(): Promise<Record<string, unknown>> {
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('ERROR') });
  // The worker runs in a process of its own, as in production (API and worker scale apart).
  const steadyCtx = await processingContext({ credits: 10_000_000, worker: false, env: PRODUCTION_CADENCE });
  const worker = await startWorkerProcess({
    databaseUrl: steadyCtx.databaseUrl,
    taskQueue: steadyCtx.taskQueue,
    drainer: drainerSettings(steadyCtx.api.deps.config),
  });
  const steady = [];
  try {
    for (const rps of LEVELS) steady.push(await steadyLag(steadyCtx, rps));
  } finally {
    if (process.env.BENCH_PROFILE) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await killWorkerProcess(worker);
    await steadyCtx.close();
  }
  const backlogCtx = await processingContext({ credits: 10_000_000, worker: false, env: PRODUCTION_CADENCE });
  let backlog;
  try {
    backlog = await backlogThroughput(backlogCtx);
  } finally {
    await backlogCtx.close();
    await stopTestStack();
  }
  return { name: 'agent-processing', steadyLoad: steady, backlog };
}
