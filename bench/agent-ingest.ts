/**
 * Agent chat ingest: throughput (events/s) and p50/p99 latency of POST /v3/rest/agent-conversations/ingest
 * for (a) 500-event requests, each a new session, and (b) single-event requests at concurrency 32
 * spread over many sessions, sent by a client in its own process (bench/agent-ingest-client.ts) to
 * the production entrypoint (`src/main/api.ts`, its logs at `info` to /dev/null) with one and with
 * two API processes (API_PROCESSES); beside two limits measured in the same run: the same event rows
 * inserted straight through `pg` (one multi-row statement per 500-event batch, one insert per
 * single event, the best writer count), and the HTTP floor (the same client and bodies against a
 * bare node:http server that only reads the body and answers 202). The API path also sanitizes
 * every string (Intake's pattern table), takes the session locks, checks the revision rules and
 * requests the sessions' wakes, in transactions shared by the requests that arrive together.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import pg from 'pg';
import { createDatabasePool } from '../src/db/pool.js';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import type { AgentEvent } from '../src/domain/agent-ingest.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { event, insertRawEvents, insertRawSession, TEXT, type IngestLoad, type RawSession } from './agent-events.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { startApiProcess } from '../harness/api-process.js';
import { clientProcess } from './client-process.js';
import { load, type Summary } from './stats.js';
import { installQuietRuntime } from './runtime.js';

const CONCURRENCY = 32;
const BATCH = { requests: 40, concurrency: 4, events: 500 };
const SINGLE = { requests: 3000, sessions: 300 };
/** The open-loop phase: single events offered at this share of raw pg's single-row rate (the goal's ratio), for this long. */
const OPEN_LOOP_SHARE = 0.5;
const OPEN_LOOP_SECONDS = 20;
const OPEN_LOOP_MAX_IN_FLIGHT = 512;
/** API processes measured (API_PROCESSES). */
const PROCESSES = (process.env.BENCH_API_PROCESSES ?? '1,2').split(',').map(Number);

const perEvent = (s: Summary, events: number) => ({ ...s, eventsPerSecond: Number((s.throughputPerSecond * events).toFixed(1)) });
const ratio = (api: Summary, base: Summary) => ({
  throughputApiOverPg: Number((api.throughputPerSecond / base.throughputPerSecond).toFixed(3)),
  p50ApiOverPg: Number((api.latencyMs.p50 / base.latencyMs.p50).toFixed(2)),
  p99ApiOverPg: Number((api.latencyMs.p99 / base.latencyMs.p99).toFixed(2)),
});

export async function benchAgentIngest(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const databaseUrl = await createTestDatabase();
  const stack = await testStack();
  const pool = await createDatabasePool(databaseUrl, { poolSize: 4 });
  const raw = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  // An idle client's connection ended by the server (the stack stopping) is not an error of the run.
  raw.on('error', () => undefined);
  const floor = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', 'http-floor-server.ts')], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const org = await createTestOrg(pool, { credits: 1000 });
    const app = await createApplication(pool, { organizationId: org.organizationId, name: 'bench', agentKey: 'bench' });
    const { secret } = await issueCredential(pool, app);
    // The HTTP client runs in a process of its own, as an integrator's does.
    const client = async (
      url: string,
      phase: Pick<IngestLoad, 'prefix' | 'requests' | 'concurrency' | 'kind' | 'rate'>,
    ): Promise<Summary> => {
      const spec: IngestLoad = {
        url,
        credentials: [{ secret, agentKey: 'bench' }],
        sessions: SINGLE.sessions,
        events: BATCH.events,
        ...phase,
      };
      return clientProcess('agent-ingest-client.ts', spec);
    };
    const batchEvents = Array.from({ length: BATCH.events }, (_, i) => event(i));

    // Baseline: sessions made up front, then the same event rows through pg.
    const session = () => insertRawSession(raw, org.organizationId, app.id, randomUUID());
    const insertBatch = (s: RawSession, events: AgentEvent[]) => insertRawEvents(raw, s, events);
    const batchSessions = await Promise.all(Array.from({ length: BATCH.requests + 4 }, session));
    const singleSessions = await Promise.all(Array.from({ length: SINGLE.sessions }, session));

    // The limits first: the same rows straight through pg (the open-loop phase is offered a share of it).
    await load(4, BATCH.concurrency, (i) => insertBatch(batchSessions[BATCH.requests + i]!, batchEvents));
    const pgBatch = await load(BATCH.requests, BATCH.concurrency, (i) => insertBatch(batchSessions[i]!, batchEvents));
    // The physical limit of single-row commits on this disk is reached at a few writers and falls
    // with more (each commit waits for its fsync): the baseline is the best writer count.
    const pgSingleByWriters: Record<string, Summary> = {};
    for (const writers of [1, 2, 4, 8, 16, 32]) {
      pgSingleByWriters[writers] = await load(SINGLE.requests, writers, (i) =>
        insertBatch(singleSessions[i % SINGLE.sessions]!, [event(10_000 * writers + Math.floor(i / SINGLE.sessions))]),
      );
    }
    const pgSingle = Object.values(pgSingleByWriters).reduce((best, s) => (s.throughputPerSecond > best.throughputPerSecond ? s : best));
    // The API: the production entrypoint with one, then two processes; each its own sessions.
    const api: Record<
      string,
      {
        batchOf500: Summary & { eventsPerSecond: number };
        singleEvent: Summary & { eventsPerSecond: number };
        singleEventOpenLoop: Summary;
      }
    > = {};
    for (const processes of PROCESSES) {
      // BENCH_PROFILE_DIR: each API process writes a V8 CPU profile there when it stops.
      const profileDir = process.env.BENCH_PROFILE_DIR;
      const apiProcess = await startApiProcess(
        {
          DATABASE_URL: databaseUrl,
          TEMPORAL_ADDRESS: stack.temporal.address,
          SIGNING_SECRET: TEST_SIGNING_SECRET,
          API_PROCESSES: String(processes),
          DATABASE_POOL_SIZE: String(CONCURRENCY),
        },
        { execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
      );
      const { url } = apiProcess;
      try {
        const p = `p${processes}`;
        await client(url, { prefix: `${p}-warm`, requests: 4 * processes, concurrency: BATCH.concurrency, kind: 'batch' });
        const batch = await client(url, { prefix: `${p}-batch`, requests: BATCH.requests, concurrency: BATCH.concurrency, kind: 'batch' });
        await client(url, { prefix: `${p}-warm-single`, requests: 300, concurrency: CONCURRENCY, kind: 'single' });
        const single = await client(url, { prefix: `${p}-single`, requests: SINGLE.requests, concurrency: CONCURRENCY, kind: 'single' });
        // Honest tails: single events offered open loop at the goal's rate (half of raw pg's), for 20 s.
        const rate = Math.round(OPEN_LOOP_SHARE * pgSingle.throughputPerSecond);
        const openLoop = await client(url, {
          prefix: `${p}-open`,
          requests: rate * OPEN_LOOP_SECONDS,
          concurrency: OPEN_LOOP_MAX_IN_FLIGHT,
          kind: 'single',
          rate,
        });
        api[processes] = { batchOf500: perEvent(batch, BATCH.events), singleEvent: perEvent(single, 1), singleEventOpenLoop: openLoop };
      } finally {
        await apiProcess.stop();
      }
    }

    // The HTTP floor: the same client and bodies, a server that does nothing but answer.
    const [line] = (await once(floor.stdout, 'data')) as [Buffer];
    const floorUrl = (JSON.parse(line.toString()) as { url: string }).url;
    const floorBatch = await client(floorUrl, {
      prefix: 'floor-batch',
      requests: BATCH.requests,
      concurrency: BATCH.concurrency,
      kind: 'batch',
    });
    const floorSingle = await client(floorUrl, {
      prefix: 'floor-single',
      requests: SINGLE.requests,
      concurrency: CONCURRENCY,
      kind: 'single',
    });

    const best = (kind: 'batchOf500' | 'singleEvent') =>
      Object.values(api).reduce((a, b) => (b[kind].throughputPerSecond > a[kind].throughputPerSecond ? b : a))[kind];
    const byProcesses = (kind: 'batchOf500' | 'singleEvent', base: Summary, http: Summary) =>
      Object.fromEntries(
        Object.entries(api).map(([n, r]) => [
          n,
          {
            ...r[kind],
            ratio: ratio(r[kind], base),
            overHttpFloor: Number((r[kind].throughputPerSecond / http.throughputPerSecond).toFixed(3)),
          },
        ]),
      );
    return {
      benchmark: 'agent-ingest',
      measuredAt: new Date().toISOString(),
      setup: {
        batch: BATCH,
        single: { ...SINGLE, concurrency: CONCURRENCY },
        apiProcesses: PROCESSES,
        poolSizePerProcess: CONCURRENCY,
        contentBytesPerEvent: Buffer.byteLength(TEXT) + 6,
        apiEntrypoint: 'src/main/api.ts (LOG_LEVEL=info, logs to /dev/null)',
      },
      batchOf500: {
        api: best('batchOf500'),
        baselinePg: perEvent(pgBatch, BATCH.events),
        httpFloor: perEvent(floorBatch, BATCH.events),
        ratio: ratio(best('batchOf500'), pgBatch),
        apiByProcesses: byProcesses('batchOf500', pgBatch, floorBatch),
      },
      singleEvent: {
        api: best('singleEvent'),
        baselinePg: perEvent(pgSingle, 1),
        httpFloor: perEvent(floorSingle, 1),
        ratio: ratio(best('singleEvent'), pgSingle),
        apiByProcesses: byProcesses('singleEvent', pgSingle, floorSingle),
        openLoop: {
          offeredShareOfPg: OPEN_LOOP_SHARE,
          byProcesses: Object.fromEntries(Object.entries(api).map(([n, r]) => [n, r.singleEventOpenLoop])),
        },
        baselinePgByWriters: Object.fromEntries(
          Object.entries(pgSingleByWriters).map(([w, s]) => [w, { throughputPerSecond: s.throughputPerSecond, p99: s.latencyMs.p99 }]),
        ),
      },
    };
  } finally {
    floor.kill('SIGTERM');
    await raw.end();
    await pool.end();
    await stopTestStack();
  }
}
