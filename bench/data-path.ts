/**
 * The data path: the database's work per agent event, in one run on the real stack (PostgreSQL with
 * fsync on and `pg_stat_statements` preloaded, the Temporal dev server, the production API
 * entrypoint in a process of its own, a worker process with the local signal extractor, its
 * production drainer shards and webhook waker, and the HTTP client in a process of its own,
 * bench/agent-ingest-client.ts). Every phase is measured with pg_stat_statements (reset before it;
 * the benchmark's own queries left out), the CPU of every PostgreSQL process of the cluster
 * (/proc/<pid>/stat of the postmaster and its children; backends that exit are counted through the
 * postmaster's cutime/cstime), and the transactions of pg_stat_database:
 *  1. the limit, same database: single-row inserts of the agent_events row shape from 8
 *     connections, and 500-row multi-row inserts (bench/agent-ingest.ts's baseline statement), before
 *     the API and the worker start: rows/s, PostgreSQL CPU per row, statements per row;
 *  2. single-event ingest (one event per request, user messages and finalized assistant responses
 *     alternating), closed loop at concurrency 32 over 32 new sessions, the worker running, measured
 *     until the worker processed all of it (every session's watermark at its highest sequence, no
 *     analysis queued): requests/s, p50/p99, statements and transactions per event (API and worker
 *     together), PostgreSQL CPU per event and its ratio to the raw single row, the top statements by
 *     time and by calls;
 *     Then open loop at a fixed rate (half of that closed loop's requests/s, BENCH_FIXED_RATE to set
 *     it) for BENCH_FIXED_SECONDS (20), the worker running;
 *  3. the same two loads with the worker stopped (SIGTERM), then started again and left to drain:
 *     p50/p99, and with-worker over without-worker (goal p99 ratio <= 1.3). The closed loop's
 *     latency is its concurrency over its throughput, so its ratio is mostly the machine's
 *     throughput with processing over without; the fixed rate's ratio is what an ingest waits for
 *     beside processing at a load both sustain;
 *  4. 500-event requests, each a new session, at concurrency 4, measured until processed: events/s,
 *     statements per event, PostgreSQL CPU per event and its ratio to the raw 500-row insert (goal <= 3);
 *  5. idle: API and worker running, no load, once the machine is quiet (bench/stats.ts untilQuiet):
 *     transactions a second of the bench database (goal <= 1) and the statements that ran;
 *  6. one organization of 32 sessions against 32 organizations of one session each, the same load,
 *     rounds alternating, each measured until processed (goal one/many >= 0.9, processing included);
 *  7. wake lag: single ingests 1 s apart on an idle stack, alternately to a new session and to a quiet
 *     session of phase 2, the time from the 202 until the session's watermark reaches the event
 *     (polled every 2 ms on a connection of its own; goal: the idle drainer adds <= 50 ms).
 *
 * Sizes (environment): BENCH_DATA_PATH_SIZE=small (a quick check: every phase a tenth or less), and
 * each on its own: BENCH_RAW_ROWS (4,000 single-row inserts), BENCH_RAW_BATCHES (40 inserts of 500
 * rows), BENCH_SINGLE_REQUESTS (6,000 requests in each single-event phase, with and without the
 * worker), BENCH_BATCH_REQUESTS (40 requests of 500 events), BENCH_IDLE_SECONDS (20),
 * BENCH_ORG_REQUESTS (3,000 requests per organization phase), BENCH_ORG_ROUNDS (2: one, many,
 * many, one), BENCH_WAKE_SAMPLES (20), BENCH_API_POOL_SIZE (the API's DATABASE_POOL_SIZE, production's
 * default unless set).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import pg from 'pg';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import { drainerSettings } from '../src/agents/drainer.js';
import { createDatabasePool } from '../src/db/pool.js';
import { sleep } from '../src/dev/net.js';
import type { AgentEvent } from '../src/domain/agent-ingest.js';
import { startApiProcess, type ApiProcess } from '../harness/api-process.js';
import { TEST_SIGNING_SECRET, testConfig } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { event, insertRawEvents, insertRawSession, type IngestLoad, type RawSession } from './agent-events.js';
import { clientProcess } from './client-process.js';
import { CLK_TCK, load, percentile, postgresCpuMs, postmasterPid, processCpuMs, untilQuiet, type Summary } from './stats.js';
import { PRODUCTION_CADENCE } from './steady-sessions.js';
import { installQuietRuntime } from './runtime.js';

const small = process.env.BENCH_DATA_PATH_SIZE === 'small';
const size = (name: string, full: number, quick: number) => Number(process.env[name] ?? (small ? quick : full));
const SIZES = {
  rawRows: size('BENCH_RAW_ROWS', 4000, 400),
  rawWriters: 8,
  rawBatches: size('BENCH_RAW_BATCHES', 40, 4),
  rawBatchRows: 500,
  rawBatchConcurrency: 4,
  singleRequests: size('BENCH_SINGLE_REQUESTS', 6000, 600),
  /** The open-loop pair: this share of the closed-loop rate with the worker, for fixedSeconds, with and without it. */
  fixedRateShare: 0.5,
  fixedSeconds: size('BENCH_FIXED_SECONDS', 20, 4),
  concurrency: 32,
  sessions: 32,
  batchRequests: size('BENCH_BATCH_REQUESTS', 40, 4),
  batchConcurrency: 4,
  batchEvents: 500,
  idleSeconds: size('BENCH_IDLE_SECONDS', 20, 5),
  orgRequests: size('BENCH_ORG_REQUESTS', 3000, 300),
  orgRounds: size('BENCH_ORG_ROUNDS', 2, 1),
  organizations: 32,
  wakeSamples: size('BENCH_WAKE_SAMPLES', 20, 4),
  wakeSpacingMs: 1000,
  wakePollMs: 2,
};
/** The longest a phase may take to be processed, and to wait for a quiet machine. */
const PROCESSED_TIMEOUT_MS = 300_000;
const QUIET_TIMEOUT_MS = 20_000;
/**
 * A backend adds its transactions to pg_stat_database at most once a second, and one gone idle
 * within 10 s: the idle window starts this long after the load. (A loaded phase's count may miss the
 * last second of its backends' commits: `explicitTransactions`, from pg_stat_statements, is exact.)
 */
const STATS_SETTLE_MS = 10_500;
/** Ample for every analysis of the run. */
const CREDITS = 10_000_000;
/** The benchmark's own queries carry this name, and are left out of the statement counts. */
const TAG = 'bench_sampler';

const progress = (message: string) => process.stderr.write(`[data-path] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 3) => Number(value.toFixed(digits));
interface Statement {
  query: string;
  calls: number;
  totalMs: number;
  /** Planning time (pg_stat_statements.track_planning): what a named prepared statement's cached plan saves. */
  planMs: number;
  toplevel: boolean;
}

/** A statement as reported: its text cut to 120 characters. */
const shown = (s: Statement) => ({
  query: s.query.replace(/\s+/g, ' ').trim().slice(0, 120),
  calls: s.calls,
  totalMs: round(s.totalMs, 1),
  meanMs: round(s.totalMs / s.calls, 3),
  meanPlanMs: round(s.planMs / s.calls, 3),
  ...(s.toplevel ? {} : { nested: true }),
});

/** The benchmark's connection for its statistics: its own transactions are counted, to be subtracted. */
class Sampler {
  transactions = 0;
  constructor(private readonly client: pg.Client) {}

  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    this.transactions++;
    return (await this.client.query<R>(text, values)).rows;
  }

  resetStatements = () => this.query('SELECT pg_stat_statements_reset()');

  /** The bench database's statements since the last reset, the benchmark's own left out. */
  statements = async (): Promise<Statement[]> =>
    (
      await this.query<{ query: string; calls: string; total: number; plan: number; toplevel: boolean }>(
        `SELECT query, calls, total_exec_time AS total, total_plan_time AS plan, toplevel FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%pg_stat_database%' AND query NOT ILIKE '%${TAG}%'`,
      )
    ).map((r) => ({ query: r.query, calls: Number(r.calls), totalMs: r.total, planMs: r.plan, toplevel: r.toplevel }));

  /**
   * The bench database's committed and rolled-back transactions, with this connection's own so far
   * (each of its queries is one). Backends report their counts at most once a second (an idle one
   * within 10 s): this connection forces its own report first.
   */
  async transactionsNow(): Promise<{ count: number; own: number }> {
    await this.query(`SELECT pg_stat_force_next_flush() AS ${TAG}`);
    const own = this.transactions;
    const [row] = await this.query<{ n: number }>(
      'SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return { count: row!.n, own };
  }
}

interface Measured<T> {
  result: T;
  seconds: number;
  postgresCpuMs: number;
  apiCpuMs: number;
  workerCpuMs: number;
  /** The bench database's transactions, the benchmark's own subtracted. */
  transactions: number;
  statements: Statement[];
}

const calls = (list: Statement[]) => list.reduce((sum, s) => sum + s.calls, 0);
/** Transactions ended by a statement (START TRANSACTION ... COMMIT): exact, unlike pg_stat_database's count, but without the single statements' own. */
const explicitTransactions = (list: Statement[]) =>
  calls(list.filter((s) => s.toplevel && /^\s*(COMMIT|ROLLBACK|END|ABORT)\b/i.test(s.query)));

/** The statements that only open and end transactions (START TRANSACTION, COMMIT...): counted among the statements. */
const transactionControl = (list: Statement[]) =>
  calls(list.filter((s) => s.toplevel && /^\s*(BEGIN|START TRANSACTION|COMMIT|ROLLBACK|END|ABORT)\b/i.test(s.query)));

/**
 * What every phase reports per event (or row): statements (top-level, of which transaction control
 * the START TRANSACTION and COMMIT ones; with nested: those run inside functions and triggers too,
 * foreign-key checks among them), transactions, CPU.
 */
function perUnit(m: Measured<unknown>, units: number) {
  return {
    statements: round(calls(m.statements.filter((s) => s.toplevel)) / units, 4),
    transactionControl: round(transactionControl(m.statements) / units, 4),
    statementsWithNested: round(calls(m.statements) / units, 4),
    transactions: round(m.transactions / units, 3),
    explicitTransactions: round(explicitTransactions(m.statements) / units, 3),
    postgresCpuMs: round(m.postgresCpuMs / units, 4),
    /** Statements' execution and planning time (pg_stat_statements, top level), an event. */
    executeMs: round(m.statements.filter((x) => x.toplevel).reduce((sum, x) => sum + x.totalMs, 0) / units, 4),
    planMs: round(m.statements.filter((x) => x.toplevel).reduce((sum, x) => sum + x.planMs, 0) / units, 4),
    apiCpuMs: round(m.apiCpuMs / units, 4),
    workerCpuMs: round(m.workerCpuMs / units, 4),
  };
}

/** perUnit's figures named per event, as the loaded phases report them. */
const perEventFigures = (per: ReturnType<typeof perUnit>) => ({
  statementsPerEvent: per.statements,
  transactionControlStatementsPerEvent: per.transactionControl,
  statementsWithNestedPerEvent: per.statementsWithNested,
  transactionsPerEvent: per.transactions,
  explicitTransactionsPerEvent: per.explicitTransactions,
  postgresCpuMsPerEvent: per.postgresCpuMs,
  statementExecuteMsPerEvent: per.executeMs,
  statementPlanMsPerEvent: per.planMs,
  apiCpuMsPerEvent: per.apiCpuMs,
  workerCpuMsPerEvent: per.workerCpuMs,
});

const topBy = (statements: Statement[], key: 'totalMs' | 'calls', n = 10) =>
  [...statements]
    .sort((a, b) => b[key] - a[key])
    .slice(0, n)
    .map(shown);

const latency = (s: Summary) => ({ p50: s.latencyMs.p50, p99: s.latencyMs.p99, max: s.latencyMs.max, mean: s.latencyMs.mean });

export async function benchDataPath(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const started = performance.now();
  const databaseUrl = await createTestDatabase();
  const stack = await testStack();
  const postmaster = await postmasterPid(stack.postgres.dataDir);
  const pool = await createDatabasePool(databaseUrl, { poolSize: 4 });
  const raw = new pg.Pool({ connectionString: databaseUrl, max: SIZES.rawWriters });
  // An idle client's connection ended by the server (the stack stopping) is not an error of the run.
  raw.on('error', () => undefined);
  const samplerClient = new pg.Client({ connectionString: databaseUrl });
  await samplerClient.connect();
  samplerClient.on('error', () => undefined);
  const sampler = new Sampler(samplerClient);
  await sampler.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');

  const taskQueue = `bench-${randomUUID()}`;
  const config = testConfig({ TEMPORAL_TASK_QUEUE: taskQueue, ...PRODUCTION_CADENCE });
  let api: ApiProcess | undefined;
  let worker: ChildProcess | undefined;
  const startWorker = () =>
    startWorkerProcess({
      databaseUrl,
      taskQueue,
      drainer: drainerSettings(config),
      drainShards: config.agents.drainShards,
      webhookWaker: true,
    });
  /** SIGTERM (the worker drains and hands its shards back), SIGKILL after 20 s. */
  const stopWorker = async () => {
    if (!worker) return;
    const proc = worker;
    worker = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    if ((await Promise.race([exited.then(() => true), sleep(20_000).then(() => false)])) === false) await killWorkerProcess(proc);
  };

  /** Runs `phase` between two readings of the statistics (pg_stat_statements reset first). */
  const measure = async <T>(phase: () => Promise<T>): Promise<Measured<T>> => {
    await sampler.resetStatements();
    const before = {
      tx: await sampler.transactionsNow(),
      pg: await postgresCpuMs(postmaster),
      api: await processCpuMs(api?.child.pid),
      worker: await processCpuMs(worker?.pid),
      workerPid: worker?.pid,
    };
    const t0 = performance.now();
    const result = await phase();
    const seconds = (performance.now() - t0) / 1000;
    const pgAfter = await postgresCpuMs(postmaster);
    const apiAfter = await processCpuMs(api?.child.pid);
    // A worker started within the phase counts from 0.
    const workerAfter = await processCpuMs(worker?.pid);
    const workerBefore = worker?.pid === before.workerPid ? before.worker : 0;
    const statements = await sampler.statements();
    const tx = await sampler.transactionsNow();
    return {
      result,
      seconds,
      postgresCpuMs: pgAfter - before.pg,
      apiCpuMs: apiAfter - before.api,
      workerCpuMs: Math.max(0, workerAfter - workerBefore),
      transactions: tx.count - before.tx.count - (tx.own - before.tx.own),
      statements,
    };
  };

  /** Waits until every session of `prefix` is processed through its highest sequence and none has an analysis queued. */
  const untilProcessed = async (prefix: string, sessions: number) => {
    const t0 = performance.now();
    for (;;) {
      const [row] = await sampler.query<{ sessions: number; behind: number; queued: number }>(
        `SELECT 1 AS ${TAG},
           (SELECT count(*)::int FROM agent_sessions WHERE external_session_id LIKE $1) AS sessions,
           (SELECT count(*)::int FROM agent_sessions WHERE external_session_id LIKE $1
              AND (processed_through_sequence IS NULL OR processed_through_sequence < highest_sequence)) AS behind,
           (SELECT count(*)::int FROM agent_analysis_jobs j JOIN agent_sessions s ON s.id = j.session_id
              WHERE j.status = 'queued' AND s.external_session_id LIKE $1) AS queued`,
        [`${prefix}-%`],
      );
      if (row!.sessions === sessions && row!.behind === 0 && row!.queued === 0) return (performance.now() - t0) / 1000;
      if (performance.now() - t0 > PROCESSED_TIMEOUT_MS)
        throw new Error(`${prefix}: not processed after ${PROCESSED_TIMEOUT_MS / 1000} s: ${JSON.stringify(row)}`);
      await sleep(100);
    }
  };

  try {
    // Fixtures: the organization of most phases, 32 more (one session each), and the raw limit's application.
    const org = await createTestOrg(pool, { credits: CREDITS });
    const credentialOf = async (organizationId: string, agentKey: string) => {
      const app = await createApplication(pool, { organizationId, name: agentKey, agentKey });
      return { app, secret: (await issueCredential(pool, app)).secret, agentKey };
    };
    const main = await credentialOf(org.organizationId, 'bench');
    const mainCredential = { secret: main.secret, agentKey: main.agentKey };
    const many: IngestLoad['credentials'] = [];
    for (let i = 0; i < SIZES.organizations; i++) {
      const o = await createTestOrg(pool, { credits: CREDITS });
      const { secret, agentKey } = await credentialOf(o.organizationId, 'bench');
      many.push({ secret, agentKey });
    }
    const rawApp = await credentialOf(org.organizationId, 'raw');

    // 1. The limit: the same rows straight through pg, before the API and the worker run.
    progress('raw inserts');
    const session = () => insertRawSession(raw, org.organizationId, rawApp.app.id, `raw-${randomUUID()}`);
    const insert = (s: RawSession, events: AgentEvent[]) => insertRawEvents(raw, s, events);
    const rawSessions = await Promise.all(Array.from({ length: SIZES.sessions }, session));
    const batchSessions = await Promise.all(Array.from({ length: SIZES.rawBatches + SIZES.rawBatchConcurrency }, session));
    const batchEvents = Array.from({ length: SIZES.rawBatchRows }, (_, i) => event(i));
    // Warm: a few of each.
    await load(200, SIZES.rawWriters, (i) => insert(rawSessions[i % SIZES.sessions]!, [event(1_000_000 + i)]));
    await load(SIZES.rawBatchConcurrency, SIZES.rawBatchConcurrency, (i) => insert(batchSessions[SIZES.rawBatches + i]!, batchEvents));
    const rawSingle = await measure(() =>
      load(SIZES.rawRows, SIZES.rawWriters, (i) => insert(rawSessions[i % SIZES.sessions]!, [event(Math.floor(i / SIZES.sessions))])),
    );
    const rawBatch = await measure(() => load(SIZES.rawBatches, SIZES.rawBatchConcurrency, (i) => insert(batchSessions[i]!, batchEvents)));
    const rawFigures = (m: Measured<Summary>, rowsPerCall: number) => {
      const n = m.result.requests * rowsPerCall;
      const per = perUnit(m, n);
      // Each statement is a transaction of its own (autocommit).
      return {
        rows: n,
        rowsPerSecond: round(n / m.result.seconds, 1),
        latencyMs: latency(m.result),
        postgresCpuMsPerRow: per.postgresCpuMs,
        statementsPerRow: per.statements,
      };
    };
    const rawSingleFigures = { writers: SIZES.rawWriters, ...rawFigures(rawSingle, 1) };
    const rawBatchFigures = {
      rowsPerStatement: SIZES.rawBatchRows,
      concurrency: SIZES.rawBatchConcurrency,
      ...rawFigures(rawBatch, SIZES.rawBatchRows),
    };

    // The stack: the production API entrypoint and a worker process.
    progress('starting the API and the worker');
    api = await startApiProcess({
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...PRODUCTION_CADENCE,
      // The limiter runs (its statements count) but never refuses.
      AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '100000000',
      ...(process.env.BENCH_API_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_API_POOL_SIZE } : {}),
    });
    const { url } = api;
    worker = await startWorker();
    const client = (phase: Omit<IngestLoad, 'url' | 'credentials' | 'events'> & { credentials?: IngestLoad['credentials'] }) =>
      clientProcess('agent-ingest-client.ts', {
        url,
        credentials: [mainCredential],
        events: SIZES.batchEvents,
        ...phase,
      } satisfies IngestLoad);
    const singleLoad = (prefix: string, requests = SIZES.singleRequests, credentials = [mainCredential]) =>
      client({ prefix, requests, concurrency: SIZES.concurrency, kind: 'single', sessions: SIZES.sessions, credentials });
    /** A load and then the wait until it is processed: ingest figures, the seconds until processed. */
    const loadUntilProcessed = async (prefix: string, send: () => Promise<Summary>, sessions: number) => {
      const summary = await send();
      const drainSeconds = await untilProcessed(prefix, sessions);
      return { summary, drainSeconds };
    };

    // Warm: the API's and the worker's first requests, sessions and workflows.
    progress('warming up');
    await loadUntilProcessed('warm', () => singleLoad('warm', 600), SIZES.sessions);
    const quietBeforeSingle = await untilQuiet(0.3, QUIET_TIMEOUT_MS);

    /**
     * Who waits for whom while `send` runs (pg_stat_activity every 50 ms): the average number of the
     * bench database's backends waiting on a lock, by the statement that waits and the one that holds
     * it (first 70 characters each), the average number active (running or waiting), and the
     * longest a waiting statement was seen running (the tail of the waits).
     */
    const whoWaits = async <T>(send: () => Promise<T>): Promise<{ result: T; waits: Record<string, unknown> }> => {
      const pairs = new Map<string, number>();
      /** The longest a waiting statement was seen running, by pair: the lock waits' tail (sampled every 50 ms). */
      const longest = new Map<string, number>();
      let samples = 0;
      let active = 0;
      let sending = true;
      const sampling = (async () => {
        while (sending) {
          const rows = await sampler.query<{ waiting: string | null; holding: string | null; active: number; waited_ms: number | null }>(
            `SELECT 1 AS ${TAG}, left(regexp_replace(w.query, '\\s+', ' ', 'g'), 70) AS waiting,
               (extract(epoch FROM clock_timestamp() - w.query_start) * 1000)::float8 AS waited_ms,
               left(regexp_replace(b.query, '\\s+', ' ', 'g'), 70) AS holding,
               (SELECT count(*)::int FROM pg_stat_activity a WHERE a.datname = current_database() AND a.state = 'active'
                  AND a.query NOT ILIKE '%${TAG}%') AS active
             FROM (SELECT 1) one
             LEFT JOIN pg_stat_activity w ON w.datname = current_database() AND w.wait_event_type = 'Lock'
             LEFT JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS bp(pid) ON true
             LEFT JOIN pg_stat_activity b ON b.pid = bp.pid`,
          );
          samples++;
          active += rows[0]?.active ?? 0;
          for (const r of rows) {
            if (!r.waiting) continue;
            const pair = `${r.waiting} <- ${r.holding ?? '?'}`;
            pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
            if (r.waited_ms !== null && r.waited_ms > (longest.get(pair) ?? 0)) longest.set(pair, r.waited_ms);
          }
          await sleep(50);
        }
      })();
      try {
        return {
          result: await send(),
          waits: {
            samples,
            activeBackends: round(active / Math.max(1, samples), 2),
            waitingOnLocks: round([...pairs.values()].reduce((a, b) => a + b, 0) / Math.max(1, samples), 2),
            byPair: [...pairs]
              .sort((a, b) => b[1] - a[1])
              .slice(0, 8)
              .map(([pair, n]) => ({ pair, backends: round(n / Math.max(1, samples), 3) })),
            longestSeenMs: [...longest]
              .sort((a, b) => b[1] - a[1])
              .slice(0, 5)
              .map(([pair, ms]) => ({ pair, ms: round(ms, 1) })),
          },
        };
      } finally {
        sending = false;
        await sampling;
      }
    };

    /** `send` measured (then `after`, inside the measurement), with who waited for whom while it ran. */
    const measureWaits = async <T>(send: () => Promise<T>, after?: () => Promise<unknown>) => {
      let waits: Record<string, unknown> = {};
      const measured = await measure(async () => {
        const r = await whoWaits(send);
        waits = r.waits;
        await after?.();
        return r.result;
      });
      return { measured, waits };
    };

    // 2. Single events, the worker processing.
    progress('single events, worker running');
    let withWorkerWaits: Record<string, unknown> = {};
    const withWorker = await measure(() =>
      loadUntilProcessed(
        'w',
        async () => {
          const { result, waits } = await whoWaits(() => singleLoad('w'));
          withWorkerWaits = waits;
          return result;
        },
        SIZES.sessions,
      ),
    );
    const singleFigures = (m: Measured<{ summary: Summary; drainSeconds: number }>) => {
      const events = m.result.summary.requests;
      const per = perUnit(m, events);
      return {
        requests: events,
        concurrency: SIZES.concurrency,
        sessions: SIZES.sessions,
        requestsPerSecond: m.result.summary.throughputPerSecond,
        latencyMs: latency(m.result.summary),
        ingestSeconds: m.result.summary.seconds,
        processedAfterIngestSeconds: round(m.result.drainSeconds, 2),
        processedEventsPerSecond: round(events / m.seconds, 1),
        ...perEventFigures(per),
        postgresCpuOverRawSingleRow: round(per.postgresCpuMs / rawSingleFigures.postgresCpuMsPerRow, 2),
      };
    };
    const withWorkerFigures = {
      ...singleFigures(withWorker),
      topByTotalTime: topBy(withWorker.statements, 'totalMs'),
      topByCalls: topBy(withWorker.statements, 'calls', 24),
      lockWaits: withWorkerWaits,
    };

    // 2b. Open loop at a rate both sides sustain (half of the closed loop's with the worker): the
    // closed loop's latency is its concurrency over its throughput, so its ratio is the throughput's;
    // at a fixed rate, what an ingest waits for beside processing (locks, CPU) is what moves the p99.
    const fixedRate = Number(
      process.env.BENCH_FIXED_RATE ?? Math.max(10, Math.round(withWorkerFigures.requestsPerSecond * SIZES.fixedRateShare)),
    );
    const fixedLoad = (prefix: string) =>
      client({
        prefix,
        requests: Math.round(fixedRate * SIZES.fixedSeconds),
        concurrency: 256,
        kind: 'single',
        sessions: SIZES.sessions,
        rate: fixedRate,
      });
    const fixedFigures = (m: Measured<Summary>, waits: Record<string, unknown>) => {
      const per = perUnit(m, m.result.requests);
      return {
        offeredPerSecond: fixedRate,
        requests: m.result.requests,
        requestsPerSecond: m.result.throughputPerSecond,
        latencyMs: latency(m.result),
        ...perEventFigures(per),
        postgresCpuOverRawSingleRow: round(per.postgresCpuMs / rawSingleFigures.postgresCpuMsPerRow, 2),
        lockWaits: waits,
        topByTotalTime: topBy(m.statements, 'totalMs', 5),
        topByCalls: topBy(m.statements, 'calls', 12),
      };
    };
    await untilQuiet(0.3, QUIET_TIMEOUT_MS);
    progress(`single events at ${fixedRate}/s, worker running`);
    // Measured until processed, so that its figures an event hold the processing too.
    const fixedWith = await measureWaits(
      () => fixedLoad('fw'),
      () => untilProcessed('fw', SIZES.sessions),
    );
    const fixedWithFigures = fixedFigures(fixedWith.measured, fixedWith.waits);

    // 3. The same load with the worker stopped; then it starts again and drains.
    progress('single events, worker stopped');
    await stopWorker();
    const quietBeforeAlone = await untilQuiet(0.3, QUIET_TIMEOUT_MS);
    const { measured: alone, waits: aloneWaits } = await measureWaits(() => singleLoad('nw'));
    const aloneFigures = (() => {
      const per = perUnit(alone, alone.result.requests);
      return {
        requests: alone.result.requests,
        requestsPerSecond: alone.result.throughputPerSecond,
        latencyMs: latency(alone.result),
        statementsPerEvent: per.statements,
        transactionsPerEvent: per.transactions,
        explicitTransactionsPerEvent: per.explicitTransactions,
        postgresCpuMsPerEvent: per.postgresCpuMs,
        apiCpuMsPerEvent: per.apiCpuMs,
        topByCalls: topBy(alone.statements, 'calls', 5),
        lockWaits: aloneWaits,
      };
    })();
    await untilQuiet(0.3, QUIET_TIMEOUT_MS);
    progress(`single events at ${fixedRate}/s, worker stopped`);
    const { measured: fixedAlone, waits: fixedAloneWaits } = await measureWaits(() => fixedLoad('fnw'));
    const fixedAloneFigures = fixedFigures(fixedAlone, fixedAloneWaits);
    progress('worker restarting, draining');
    const drained = await measure(async () => {
      const t0 = performance.now();
      worker = await startWorker();
      const startSeconds = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await untilProcessed('nw', SIZES.sessions);
      await untilProcessed('fnw', SIZES.sessions);
      const processingSeconds = (performance.now() - t1) / 1000;
      return { startSeconds, processingSeconds };
    });
    const drainFigures = (() => {
      const events = alone.result.requests + fixedAlone.result.requests;
      const per = perUnit(drained, events);
      return {
        events,
        workerStartSeconds: round(drained.result.startSeconds, 2),
        processingSeconds: round(drained.result.processingSeconds, 2),
        eventsPerSecond: round(events / drained.result.processingSeconds, 1),
        statementsPerEvent: per.statements,
        postgresCpuMsPerEvent: per.postgresCpuMs,
        workerCpuMsPerEvent: per.workerCpuMs,
      };
    })();
    const ingestWithProcessingOverAlone = {
      p50: round(withWorkerFigures.latencyMs.p50 / aloneFigures.latencyMs.p50, 2),
      p99: round(withWorkerFigures.latencyMs.p99 / aloneFigures.latencyMs.p99, 2),
    };
    const fixedRateWithProcessingOverAlone = {
      p50: round(fixedWithFigures.latencyMs.p50 / fixedAloneFigures.latencyMs.p50, 2),
      p99: round(fixedWithFigures.latencyMs.p99 / fixedAloneFigures.latencyMs.p99, 2),
    };

    // 4. 500-event requests, each a new session, until processed.
    const quietBeforeBatch = await untilQuiet(0.3, QUIET_TIMEOUT_MS);
    progress('500-event requests');
    const batch = await measure(() =>
      loadUntilProcessed(
        'b',
        () =>
          client({
            prefix: 'b',
            requests: SIZES.batchRequests,
            concurrency: SIZES.batchConcurrency,
            kind: 'batch',
            sessions: SIZES.batchRequests,
          }),
        SIZES.batchRequests,
      ),
    );
    const batchFigures = (() => {
      const events = SIZES.batchRequests * SIZES.batchEvents;
      const per = perUnit(batch, events);
      return {
        requests: SIZES.batchRequests,
        eventsPerRequest: SIZES.batchEvents,
        concurrency: SIZES.batchConcurrency,
        ingestEventsPerSecond: round(batch.result.summary.throughputPerSecond * SIZES.batchEvents, 1),
        latencyMs: latency(batch.result.summary),
        processedAfterIngestSeconds: round(batch.result.drainSeconds, 2),
        processedEventsPerSecond: round(events / batch.seconds, 1),
        ...perEventFigures(per),
        postgresCpuOverRaw500Row: round(per.postgresCpuMs / rawBatchFigures.postgresCpuMsPerRow, 2),
        topByCalls: topBy(batch.statements, 'calls', 5),
      };
    })();

    // 5. Idle: API and worker running, nothing sent.
    progress('idle');
    const quietBeforeIdle = await untilQuiet(0.3, 60_000);
    // What the backends did before is in pg_stat_database once each reported it (an idle one within 10 s).
    await sleep(STATS_SETTLE_MS);
    const idle = await measure(() => sleep(SIZES.idleSeconds * 1000));
    const idleFigures = {
      seconds: round(idle.seconds, 1),
      quietWaitSeconds: quietBeforeIdle,
      transactionsPerSecond: round(idle.transactions / idle.seconds, 2),
      explicitTransactionsPerSecond: round(explicitTransactions(idle.statements) / idle.seconds, 2),
      statementsPerSecond: round(idle.statements.filter((s) => s.toplevel).reduce((sum, s) => sum + s.calls, 0) / idle.seconds, 2),
      postgresCpuMsPerSecond: round(idle.postgresCpuMs / idle.seconds, 2),
      workerCpuMsPerSecond: round(idle.workerCpuMs / idle.seconds, 2),
      apiCpuMsPerSecond: round(idle.apiCpuMs / idle.seconds, 2),
      topByCalls: topBy(idle.statements, 'calls'),
    };

    // 6. One organization against many, rounds alternating the order.
    const orgRounds: { round: number; kind: 'one' | 'many'; figures: ReturnType<typeof singleFigures> }[] = [];
    for (let r = 0; r < SIZES.orgRounds; r++) {
      for (const kind of r % 2 === 0 ? (['one', 'many'] as const) : (['many', 'one'] as const)) {
        await untilQuiet(0.3, QUIET_TIMEOUT_MS);
        progress(`organizations: ${kind}, round ${r + 1}`);
        const prefix = `org-${kind}-${r}`;
        const m = await measure(() =>
          loadUntilProcessed(prefix, () => singleLoad(prefix, SIZES.orgRequests, kind === 'one' ? [mainCredential] : many), SIZES.sessions),
        );
        orgRounds.push({ round: r, kind, figures: singleFigures(m) });
      }
    }
    const orgTotals = (kind: 'one' | 'many') => {
      const rounds = orgRounds.filter((o) => o.kind === kind).map((o) => o.figures);
      const events = rounds.reduce((sum, f) => sum + f.requests, 0);
      const ingestSeconds = rounds.reduce((sum, f) => sum + f.ingestSeconds, 0);
      const processedSeconds = rounds.reduce((sum, f) => sum + f.requests / f.processedEventsPerSecond, 0);
      return {
        organizations: kind === 'one' ? 1 : SIZES.organizations,
        sessions: SIZES.sessions,
        events,
        requestsPerSecond: round(events / ingestSeconds, 1),
        processedEventsPerSecond: round(events / processedSeconds, 1),
        p50Ms: percentile(
          rounds.map((f) => f.latencyMs.p50).sort((a, b) => a - b),
          50,
        ),
        p99Ms: Math.max(...rounds.map((f) => f.latencyMs.p99)),
      };
    };
    const oneOrg = orgTotals('one');
    const manyOrgs = orgTotals('many');

    // 7. Wake lag on an idle stack: a new session, then a quiet one of phase 2, alternately.
    await untilQuiet(0.3, QUIET_TIMEOUT_MS);
    progress('wake lag');
    const watcher = new pg.Client({ connectionString: databaseUrl });
    await watcher.connect();
    const wakes: { kind: 'new' | 'quiet'; ingestMs: number; lagMs: number }[] = [];
    try {
      for (let k = 0; k < SIZES.wakeSamples; k++) {
        await sleep(SIZES.wakeSpacingMs);
        const kind = k % 2 === 0 ? 'new' : 'quiet';
        const externalSessionId = kind === 'new' ? `wake-${k}` : `w-${Math.floor(k / 2) % SIZES.sessions}`;
        const highest =
          kind === 'new'
            ? -1
            : Number(
                (
                  await watcher.query<{ h: string }>(
                    `SELECT highest_sequence AS h, 1 AS ${TAG} FROM agent_sessions WHERE application_id = $1 AND external_session_id = $2`,
                    [main.app.id, externalSessionId],
                  )
                ).rows[0]!.h,
              );
        const sequence = highest + 1;
        const t0 = performance.now();
        const res = await fetch(`${url}/v3/rest/agent-conversations/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-agent-key': main.secret },
          body: JSON.stringify({ agentKey: main.agentKey, externalSessionId, participants: [], events: [event(sequence)] }),
        });
        const answered = performance.now();
        const body = (await res.json()) as { sessionId: string };
        if (res.status !== 202) throw new Error(`wake lag: ingest answered ${res.status}: ${JSON.stringify(body)}`);
        for (;;) {
          const { rows } = await watcher.query<{ w: string | null }>(
            `SELECT processed_through_sequence AS w, 1 AS ${TAG} FROM agent_sessions WHERE id = $1`,
            [body.sessionId],
          );
          if (rows[0]!.w !== null && Number(rows[0]!.w) >= sequence) break;
          if (performance.now() - answered > 30_000)
            throw new Error(`wake lag: ${externalSessionId} not processed through ${sequence} in 30 s`);
          await sleep(SIZES.wakePollMs);
        }
        wakes.push({ kind, ingestMs: round(answered - t0, 1), lagMs: round(performance.now() - answered, 1) });
      }
    } finally {
      await watcher.end();
    }
    const lagSummary = (list: number[]) => {
      const sorted = [...list].sort((a, b) => a - b);
      return sorted.length ? { p50: percentile(sorted, 50), p90: percentile(sorted, 90), max: percentile(sorted, 100) } : null;
    };
    const wakeLag = {
      samples: wakes.length,
      spacingMs: SIZES.wakeSpacingMs,
      pollMs: SIZES.wakePollMs,
      lagMs: lagSummary(wakes.map((w) => w.lagMs)),
      newSessionLagMs: lagSummary(wakes.filter((w) => w.kind === 'new').map((w) => w.lagMs)),
      quietSessionLagMs: lagSummary(wakes.filter((w) => w.kind === 'quiet').map((w) => w.lagMs)),
      ingestLatencyMs: lagSummary(wakes.map((w) => w.ingestMs)),
      each: wakes,
    };

    const goal = (value: number, comparison: '<=' | '>=', target: number) => ({
      value,
      goal: `${comparison} ${target}`,
      met: comparison === '<=' ? value <= target : value >= target,
    });
    const oneOverMany = {
      requestsPerSecond: round(oneOrg.requestsPerSecond / manyOrgs.requestsPerSecond, 2),
      processedEventsPerSecond: round(oneOrg.processedEventsPerSecond / manyOrgs.processedEventsPerSecond, 2),
    };
    return {
      setup: {
        ...SIZES,
        size: small ? 'small' : 'full',
        taskQueue: 'a fresh one',
        drainShards: config.agents.drainShards,
        drainPollMs: config.agents.drainPollMs,
        workflowSignalSeconds: config.agents.workflowSignalSeconds,
        apiPoolSize: process.env.BENCH_API_POOL_SIZE ? Number(process.env.BENCH_API_POOL_SIZE) : 'production default',
        apiEntrypoint: 'src/main/api.ts (LOG_LEVEL=info, logs to /dev/null)',
        worker: 'harness/worker-process.ts: local signal extractor, production drainer shards, webhook waker',
        postgres:
          'fsync on; pg_stat_statements (track=all; statementsPerEvent counts top-level statements, statementsWithNested also those run inside functions and triggers), track_io_timing',
        clkTck: CLK_TCK,
        quietWaitSeconds: { beforeSingle: quietBeforeSingle, beforeAlone: quietBeforeAlone, beforeBatch: quietBeforeBatch },
      },
      raw: { singleRow: rawSingleFigures, multiRow500: rawBatchFigures },
      singleEvent: {
        withWorker: withWorkerFigures,
        withoutWorker: aloneFigures,
        drainAfterRestart: drainFigures,
        ingestWithProcessingOverAlone,
        fixedRate: {
          withWorker: fixedWithFigures,
          withoutWorker: fixedAloneFigures,
          withProcessingOverAlone: fixedRateWithProcessingOverAlone,
        },
      },
      batchOf500: batchFigures,
      idle: idleFigures,
      organizations: { oneOrg, manyOrgs, oneOverMany, rounds: orgRounds },
      wakeLag,
      goals: {
        ingestWithProcessingOverAloneP99: goal(ingestWithProcessingOverAlone.p99, '<=', 1.3),
        fixedRateIngestWithProcessingOverAloneP99: goal(fixedRateWithProcessingOverAlone.p99, '<=', 1.3),
        batchPostgresCpuOverRaw500Row: goal(batchFigures.postgresCpuOverRaw500Row, '<=', 3),
        idleTransactionsPerSecond: goal(idleFigures.transactionsPerSecond, '<=', 1),
        oneOrgOverManyProcessed: goal(oneOverMany.processedEventsPerSecond, '>=', 0.9),
        wakeLagP50Ms: goal(wakeLag.lagMs?.p50 ?? Infinity, '<=', 50),
      },
      runSeconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    await stopWorker().catch(() => undefined);
    await api?.stop().catch(() => undefined);
    await samplerClient.end().catch(() => undefined);
    await raw.end();
    await pool.end();
    await stopTestStack();
  }
}
