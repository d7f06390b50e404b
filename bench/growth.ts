/**
 * Growth: how Intake's headline figures change as its data grows. `npm run bench -- growth --size M`
 * fills one stack (PostgreSQL with fsync on, the Temporal dev server, the production API entrypoint
 * and a worker process, as bench/data-path.ts runs them) to S with the data generator
 * (bench/data-generator.ts), measures, adds the rest of M (and of L), measures again, and reports
 * each size's figures beside S's with their ratio (goal: ingest, lag and reads within 1.5x of S at L).
 *
 * What is measured at each size, on organizations whose own size does not change between sizes (so
 * that what changes is the tables' size, not the tenant's):
 *  - the limit: raw `pg` inserts of 500 agent_events rows (bench/agent-events.ts's statement) into
 *    the same tables, rows/s: what the tables' growth costs any writer;
 *  - agent ingest: single events (closed loop, concurrency 16, into 16 sessions) and 500-event
 *    requests (concurrency 4, each a new session), from a client process: requests/s, p50/p99;
 *  - processing lag: single ingests 0.5 s apart into a quiet session, the time until its watermark
 *    passes the event (polled every 5 ms): p50/p95;
 *  - reads on the reader organization (generated once, after S: about 20,000 events, 400
 *    recordings), concurrency 4: a session with its events, the sessions, signals and recordings
 *    lists (first page; recordings filtered by a recorded-at range), the offset list's fifth page,
 *    the sessions' keyset sync's first page and its fifth (following nextCursor), a transcript; with
 *    each read's CPU per process role (`cpuMsPerRead`: the API, the worker, PostgreSQL, the Temporal
 *    server, this process, the rest), read from /proc around the timed requests, and the machine's
 *    busy and stolen shares of its CPU meanwhile (`machine`, /proc/stat);
 *  - the export of the reader organization (fixed size) and of the largest organization of S (fixed
 *    size) and, from M, of the largest of the size's own organizations: seconds, lines/s;
 *  - person erasure (a person of the reader organization with participants and records), from
 *    the POST to the erasure's `finished`;
 *  - the retention sweep (the CLI's deletion, src/agents/session-deletion.ts): 100 sessions of 20
 *    events made for it at each size, their application's retention passed;
 *  - the online migration: 0035's indexes (the organization keysets) dropped and built again
 *    CONCURRENTLY, as the migration runner builds them, while single events are ingested (rounds of
 *    1,000 requests at concurrency 16 until the build is done): the build's seconds, and each
 *    round's requests/s and p50/p99 beside the ingest's figures at the same size.
 *
 * Before measuring, each size is settled: VACUUM (ANALYZE) and a CHECKPOINT, so that autovacuum's
 * first pass over the rows just copied in does not run through the measurements
 * (BENCH_GROWTH_SETTLE=0 leaves it out); `autovacuum` in each size's figures is the share of 500 ms
 * samples during the measurements in which an autovacuum worker ran, and on what.
 *
 * Sizes: `--size S|M|L` (the largest measured; default S). BENCH_GROWTH_EVENTS_SCALE (default 1)
 * scales every size's events and organizations down for a quick check (0.01: S is 10,000 events).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import { sweepAllDoomedSessions } from '../src/agents/session-deletion.js';
import { drainerSettings } from '../src/agents/drainer.js';
import { SCOPES } from '../src/auth/scopes.js';
import { concurrentStatements, readMigrations } from '../src/db/migrate.js';
import { createDatabasePool } from '../src/db/pool.js';
import { sleep } from '../src/dev/net.js';
import { startApiProcess, type ApiProcess } from '../harness/api-process.js';
import { TEST_SIGNING_SECRET, testConfig } from '../harness/config.js';
import { createTestKey, createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import { killWorkerProcess, startWorkerProcess } from '../harness/worker.js';
import { event, insertRawEvents, insertRawSession, type IngestLoad } from './agent-events.js';
import { clientProcess } from './client-process.js';
import { databaseSize, generateData, SIZES, type SizeName } from './data-generator.js';
import { installQuietRuntime } from './runtime.js';
import { busyShare, CLK_TCK, cpuTicks, everyProcessTicks, load, percentile, stealShare } from './stats.js';
import { PRODUCTION_CADENCE } from './steady-sessions.js';
import { ratiosToS } from './growth-figures.js';

const ORDER: SizeName[] = ['S', 'M', 'L'];
const SCALE = Number(process.env.BENCH_GROWTH_EVENTS_SCALE ?? 1);
const READER_EVENTS = 20_000;
const READS = 200;
const READ_CONCURRENCY = 4;
const PROCESSED_TIMEOUT_MS = 300_000;

/** BENCH_GROWTH_SETTLE=0 measures straight after the generator's COPY, with autovacuum's first pass still to run. */
const SETTLE = process.env.BENCH_GROWTH_SETTLE !== '0';

/**
 * Samples, every 500 ms until stopped, whether an autovacuum worker runs and on what: the share of
 * samples with one, and the tables named (a figure measured while one ran shares the cores with it).
 */
function autovacuumProbe(raw: pg.Pool) {
  let samples = 0;
  let busy = 0;
  const tables = new Set<string>();
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const { rows } = await raw.query<{ query: string }>(
        `SELECT query FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND query <> ''`,
      );
      samples++;
      if (rows.length > 0) busy++;
      for (const r of rows) tables.add(r.query.replace(/^autovacuum:\s*/, ''));
      await sleep(500);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await sampling;
      return { samples, busyShare: samples ? round(busy / samples) : 0, work: [...tables].sort() };
    },
  };
}

/**
 * CPU milliseconds so far of every process on the machine, summed by role: the API, the worker and
 * this process by pid, then PostgreSQL's and the Temporal server's processes by name, the rest as
 * `other` (/proc/<pid>/stat). Two readings' difference is what each spent between them.
 */
async function cpuByRole(pids: Record<string, number | undefined>): Promise<Record<string, number>> {
  const byPid = new Map(Object.entries(pids).map(([role, pid]) => [pid, role]));
  const out: Record<string, number> = { api: 0, worker: 0, bench: 0, postgres: 0, temporal: 0, other: 0 };
  for (const [pid, t] of await everyProcessTicks()) {
    const role = byPid.get(pid) ?? (t.name === 'postgres' ? 'postgres' : t.name.startsWith('temporal') ? 'temporal' : 'other');
    out[role] = (out[role] ?? 0) + (t.ticks * 1000) / CLK_TCK;
  }
  return out;
}

const progress = (message: string) => process.stderr.write(`[growth] ${new Date().toISOString()} ${message}\n`);
const round = (value: number, digits = 3) => Number(value.toFixed(digits));

export async function benchGrowth(o: { size: SizeName }): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const sizes = ORDER.slice(0, ORDER.indexOf(o.size) + 1);
  const databaseUrl = await createTestDatabase();
  const stack = await testStack();
  const pool = await createDatabasePool(databaseUrl, { poolSize: 4 });
  const raw = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  raw.on('error', () => undefined);
  const taskQueue = `bench-${randomUUID()}`;
  const config = testConfig({ TEMPORAL_TASK_QUEUE: taskQueue, ...PRODUCTION_CADENCE });
  let api: ApiProcess | undefined;
  let worker: ChildProcess | undefined;
  const started = performance.now();
  try {
    api = await startApiProcess({
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...PRODUCTION_CADENCE,
      AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '100000000',
      FEEDBACK_RATE_LIMIT_PER_MINUTE: '0',
      MANAGEMENT_RATE_LIMIT_PER_MINUTE: '0',
    });
    worker = await startWorkerProcess({
      databaseUrl,
      taskQueue,
      drainer: drainerSettings(config),
      drainShards: config.agents.drainShards,
      webhookWaker: true,
    });
    const { url } = api;
    const http = async (path: string, headers: Record<string, string>, init: RequestInit = {}) => {
      const res = await fetch(`${url}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
    };

    // The writer organization: every ingest goes to it, through the API.
    const writer = await createTestOrg(pool, { credits: 100_000_000 });
    const app = await createApplication(pool, { organizationId: writer.organizationId, name: 'bench', agentKey: 'bench' });
    const credential = { secret: (await issueCredential(pool, app)).secret, agentKey: 'bench' };
    const ingest = (phase: Omit<IngestLoad, 'url' | 'credentials'> & { credentials?: IngestLoad['credentials'] }) =>
      clientProcess('agent-ingest-client.ts', { url, credentials: [credential], ...phase } satisfies IngestLoad);
    const untilProcessed = async (prefix: string, organizationId = writer.organizationId) => {
      const t0 = performance.now();
      for (;;) {
        const { rows } = await raw.query<{ behind: number; queued: number }>(
          `SELECT (SELECT count(*)::int FROM agent_sessions WHERE organization_id = $2 AND external_session_id LIKE $1
                     AND (processed_through_sequence IS NULL OR processed_through_sequence < highest_sequence)) AS behind,
                  (SELECT count(*)::int FROM agent_analysis_jobs j JOIN agent_sessions s ON s.id = j.session_id
                     WHERE j.status = 'queued' AND s.organization_id = $2 AND s.external_session_id LIKE $1) AS queued`,
          [`${prefix}-%`, organizationId],
        );
        if (rows[0]!.behind === 0 && rows[0]!.queued === 0) return (performance.now() - t0) / 1000;
        if (performance.now() - t0 > PROCESSED_TIMEOUT_MS) throw new Error(`${prefix}: not processed: ${JSON.stringify(rows[0])}`);
        await sleep(100);
      }
    };
    const rawSessions = await Promise.all(
      Array.from({ length: 4 }, () => insertRawSession(raw, writer.organizationId, app.id, `raw-${randomUUID()}`)),
    );

    let generatedEvents = 0;
    let generatedOrganizations = 0;
    let seed = 1;
    let reader: { organizationId: string; apiKey: string } | undefined;
    let largestOfS: { organizationId: string; apiKey: string } | undefined;
    const bySize: Record<string, Record<string, unknown>> = {};
    for (const size of sizes) {
      // Fill to the size: the generator adds what the smaller sizes did not.
      const target = {
        events: Math.round(SIZES[size].events * SCALE),
        organizations: Math.max(1, Math.round(SIZES[size].organizations * SCALE)),
      };
      progress(`generating ${size}: ${(target.events - generatedEvents).toLocaleString('en')} events more`);
      const g0 = performance.now();
      const generated = await generateData(databaseUrl, {
        events: target.events - generatedEvents,
        organizations: target.organizations - generatedOrganizations,
        seed: seed++,
        progress: (m) => progress(`  ${m}`),
      });
      const generateSeconds = (performance.now() - g0) / 1000;
      generatedEvents = target.events;
      generatedOrganizations = target.organizations;
      const keyOf = async (organizationId: string) => ({
        organizationId,
        apiKey: (await createTestKey(pool, organizationId, [...SCOPES])).apiKey,
      });
      const largestOfSize = await keyOf(generated.organizations[0]!.id);
      if (!reader) {
        const r = await generateData(databaseUrl, { events: READER_EVENTS, organizations: 1, seed: 1000, progress: () => undefined });
        reader = await keyOf(r.organizations[0]!.id);
        largestOfS = largestOfSize;
      }
      const figures: Record<string, unknown> = { generateSeconds: round(generateSeconds, 1), generated: generated.counts };
      if (SETTLE) {
        // A table that grew over months has been vacuumed as it grew; one just filled by COPY has
        // not, and autovacuum's first pass over it (every page's visibility and hint bits, at M over
        // 10 GB) would run through the measurements below on the same two cores.
        progress(`${size}: settling (VACUUM (ANALYZE), CHECKPOINT)`);
        const v0 = performance.now();
        await raw.query('VACUUM (ANALYZE)');
        await raw.query('CHECKPOINT');
        figures.settleSeconds = round((performance.now() - v0) / 1000, 1);
      }
      progress(`${size}: measuring`);
      const autovacuum = autovacuumProbe(raw);

      // The limit: raw 500-row inserts into the same tables.
      const rows = Array.from({ length: 500 }, (_, i) => event(i));
      let rawRound = 0;
      const rawInsert = async () => {
        const sessions = await Promise.all(
          rawSessions.map(() => insertRawSession(raw, writer.organizationId, app.id, `raw-${size}-${rawRound++}`)),
        );
        return load(40, 4, (i) =>
          insertRawEvents(
            raw,
            sessions[i % 4]!,
            rows.map((e) => ({ ...e, externalEventId: `${e.externalEventId}-${i}`, sequence: e.sequence + 500 * Math.floor(i / 4) })),
          ),
        );
      };
      await rawInsert();
      const rawBatch = await rawInsert();
      figures.rawInsertRowsPerSecond = round((rawBatch.requests * 500) / rawBatch.seconds, 1);

      // Ingest: warm, then single events and 500-event requests, each until processed.
      await ingest({ prefix: `warm-${size}`, requests: 400, concurrency: 16, kind: 'single', sessions: 16, events: 1 });
      await untilProcessed(`warm-${size}`);
      const single = await ingest({ prefix: `single-${size}`, requests: 3000, concurrency: 16, kind: 'single', sessions: 16, events: 1 });
      const singleDrain = await untilProcessed(`single-${size}`);
      const batch = await ingest({ prefix: `batch-${size}`, requests: 40, concurrency: 4, kind: 'batch', sessions: 40, events: 500 });
      const batchDrain = await untilProcessed(`batch-${size}`);
      figures.ingestSingle = {
        requestsPerSecond: single.throughputPerSecond,
        latencyMs: { p50: single.latencyMs.p50, p99: single.latencyMs.p99 },
        drainSeconds: round(singleDrain, 2),
      };
      figures.ingestBatch = {
        eventsPerSecond: round((batch.requests * 500) / batch.seconds, 1),
        latencyMs: { p50: batch.latencyMs.p50, p99: batch.latencyMs.p99 },
        drainSeconds: round(batchDrain, 2),
      };
      figures.ingestBatchOverRaw = round((batch.requests * 500) / batch.seconds / ((rawBatch.requests * 500) / rawBatch.seconds), 3);

      // Processing lag: a single event into a quiet session, until its watermark passes it.
      const lagSession = `lag-${size}`;
      await ingest({ prefix: lagSession, requests: 1, concurrency: 1, kind: 'single', sessions: 1, events: 1 });
      await untilProcessed(lagSession);
      const lags: number[] = [];
      for (let i = 1; i <= 20; i++) {
        await sleep(500);
        const t0 = performance.now();
        await http(
          '/v3/rest/agent-conversations/ingest',
          { 'content-type': 'application/json', 'x-service-agent-key': credential.secret },
          {
            method: 'POST',
            body: JSON.stringify({ agentKey: 'bench', externalSessionId: `${lagSession}-0`, participants: [], events: [event(i)] }),
          },
        );
        for (;;) {
          const { rows: w } = await raw.query<{ through: string | null }>(
            'SELECT processed_through_sequence AS through FROM agent_sessions WHERE organization_id = $1 AND external_session_id = $2',
            [writer.organizationId, `${lagSession}-0`],
          );
          if (Number(w[0]?.through ?? -1) >= i) break;
          if (performance.now() - t0 > 30_000) throw new Error('processing lag: not processed in 30 s');
          await sleep(5);
        }
        lags.push(performance.now() - t0);
      }
      lags.sort((a, b) => a - b);
      figures.processingLagMs = { p50: percentile(lags, 50), p95: percentile(lags, 95) };

      // Reads on the reader organization, each with the CPU every process spent on it (per read).
      const roles = { api: api.child.pid, worker: worker.pid, bench: process.pid };
      const headers = { 'X-Service-Api-Key': reader.apiKey };
      const { rows: sessionIds } = await raw.query<{ id: string }>('SELECT id FROM agent_sessions WHERE organization_id = $1 ORDER BY id', [
        reader.organizationId,
      ]);
      const { rows: recordingIds } = await raw.query<{ id: string }>('SELECT id FROM recordings WHERE organization_id = $1 ORDER BY id', [
        reader.organizationId,
      ]);
      const timed = async (path: (i: number) => string) => {
        await load(20, READ_CONCURRENCY, async (i) => void (await http(path(i), headers)));
        const before = await cpuByRole(roles);
        const ticksBefore = await cpuTicks();
        const s = await load(READS, READ_CONCURRENCY, async (i) => void (await http(path(i), headers)));
        const ticksAfter = await cpuTicks();
        const after = await cpuByRole(roles);
        const machine = { busyShare: busyShare(ticksBefore, ticksAfter), stealShare: stealShare(ticksBefore, ticksAfter) };
        const cpuMsPerRead = Object.fromEntries(
          Object.keys(after).map((role) => [role, round(((after[role] ?? 0) - (before[role] ?? 0)) / READS, 3)]),
        );
        return { p50: s.latencyMs.p50, p99: s.latencyMs.p99, perSecond: s.throughputPerSecond, cpuMsPerRead, machine };
      };
      const since = new Date(Date.now() - 90 * 86_400_000).toISOString();
      const until = new Date(Date.now() - 30 * 86_400_000).toISOString();
      /** The page `depth` of the sessions' keyset sync (following nextCursor from the first). */
      const syncPage = async (resource: string, depth: number) => {
        let path = `/v3/rest/${resource}?updatedSince=1970-01-01T00:00:00Z&limit=50`;
        for (let d = 1; d < depth; d++) {
          const cursor = (await http(path, headers)).json().nextCursor as string;
          path = `/v3/rest/${resource}?cursor=${encodeURIComponent(cursor)}&limit=50`;
        }
        return path;
      };
      const deepSessions = await syncPage('agent-conversations/sessions', 5);
      const deepSignals = await syncPage('signals', 5);
      const transcriptRead = (i: number) => `/v3/rest/recordings/${recordingIds[i % recordingIds.length]!.id}/transcript`;
      figures.reads = {
        // The transcript read again, first: whether its figure depends on when in the phase it runs.
        transcriptFirst: await timed(transcriptRead),
        session: await timed((i) => `/v3/rest/agent-conversations/sessions/${sessionIds[i % sessionIds.length]!.id}`),
        sessionsFirstPage: await timed(() => '/v3/rest/agent-conversations/sessions?limit=50'),
        sessionsPage5: await timed(() => '/v3/rest/agent-conversations/sessions?limit=50&page=5'),
        sessionsSyncFirstPage: await timed(() => '/v3/rest/agent-conversations/sessions?updatedSince=1970-01-01T00:00:00Z&limit=50'),
        sessionsSyncPage5: await timed(() => deepSessions),
        signalsFirstPage: await timed(() => '/v3/rest/signals?limit=50'),
        signalsSyncPage5: await timed(() => deepSignals),
        recordingsFiltered: await timed(() => `/v3/rest/recordings?recorded_at_gte=${since}&recorded_at_lt=${until}&limit=50`),
        recordingsPage5: await timed(() => '/v3/rest/recordings?limit=50&page=5'),
        transcript: await timed(transcriptRead),
      };

      // Exports: fixed-size organizations, and the size's own largest.
      /** An export; one cut short (a batch over the statement timeout closes the stream) is reported, not fatal. */
      const exportOf = async (org: { apiKey: string }) => {
        const t0 = performance.now();
        try {
          // Streamed and counted, not held: the largest organization's export is over a GiB at M.
          const res = await fetch(`${url}/v3/rest/organization/export`, { headers: { 'X-Service-Api-Key': org.apiKey } });
          if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${(await res.text()).slice(0, 300)}`);
          let lines = 0;
          let bytes = 0;
          let tail = '';
          for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
            bytes += chunk.length;
            for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', i + 1)) lines++;
            tail = (tail + chunk).slice(-4096);
          }
          const seconds = (performance.now() - t0) / 1000;
          const complete = (tail.trimEnd().split('\n').at(-1) ?? '').startsWith('{"type":"end"');
          return { lines, complete, seconds: round(seconds, 2), linesPerSecond: round(lines / seconds, 1), bytes };
        } catch (error) {
          return { complete: false, failedAfterSeconds: round((performance.now() - t0) / 1000, 2), error: String(error) };
        }
      };
      figures.export = {
        reader: await exportOf(reader),
        largestOfS: await exportOf(largestOfS!),
        ...(size === 'S' ? {} : { largestOfSize: await exportOf(largestOfSize) }),
      };

      // Person erasure: a person of the reader organization (another one at each size).
      const { rows: people } = await raw.query<{ uuid: string; participants: number }>(
        `SELECT p.uuid, (SELECT count(*)::int FROM agent_participants ap WHERE ap.person_id = p.id) AS participants
         FROM people p WHERE p.organization_id = $1 AND p.erased_at IS NULL ORDER BY p.id OFFSET $2 LIMIT 1`,
        [reader.organizationId, ORDER.indexOf(size)],
      );
      const e0 = performance.now();
      const erasure = (await http(`/v3/rest/people/${people[0]!.uuid}/erase`, headers, { method: 'POST' })).json();
      for (;;) {
        const status = (await http(`/v3/rest/people/erasures/${String(erasure.erasureId)}`, headers)).json();
        if (status.status === 'finished') {
          figures.erasure = {
            seconds: round((performance.now() - e0) / 1000, 2),
            participants: people[0]!.participants,
            counts: status.counts,
          };
          break;
        }
        if (performance.now() - e0 > PROCESSED_TIMEOUT_MS) throw new Error('erasure not finished');
        await sleep(50);
      }

      // The retention sweep: 100 sessions of 20 events past their application's retention, in an
      // organization of their own (the writer organization grows from size to size).
      const doomedOrg = await createTestOrg(pool, { credits: 1_000_000 });
      const doomedApp = await createApplication(pool, {
        organizationId: doomedOrg.organizationId,
        name: `retention-${size}`,
        agentKey: `retention-${size}`,
      });
      const doomedCredential = { secret: (await issueCredential(pool, doomedApp)).secret, agentKey: `retention-${size}` };
      await ingest({
        prefix: `doomed-${size}`,
        requests: 100,
        concurrency: 4,
        kind: 'batch',
        sessions: 100,
        events: 20,
        credentials: [doomedCredential],
      });
      await untilProcessed(`doomed-${size}`, doomedOrg.organizationId);
      await raw.query(`UPDATE agent_applications SET retention_days = 1 WHERE id = $1`, [doomedApp.id]);
      await raw.query(`UPDATE agent_sessions SET last_ingest_at = now() - interval '2 days' WHERE application_id = $1`, [doomedApp.id]);
      const s0 = performance.now();
      // The CLI's sweep (`intake retention sweep`), in batches of its size.
      const swept = await sweepAllDoomedSessions(pool, 25);
      figures.retentionSweep = { sessions: swept, seconds: round((performance.now() - s0) / 1000, 2) };

      // The migration of the organization keysets (0035) run again at this size, online: its indexes
      // dropped, then built CONCURRENTLY as the migration runner does, while single events are ingested.
      const keysets = (await readMigrations()).find((f) => f.name === '0035_organization_keysets.sql')!;
      const statements = concurrentStatements(keysets);
      for (const { index } of statements) await raw.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
      const b0 = performance.now();
      const builds: Record<string, number> = {};
      const building = (async () => {
        for (const { statement, index } of statements) {
          const t0 = performance.now();
          await raw.query(statement);
          builds[index] = round((performance.now() - t0) / 1000, 2);
        }
        return (performance.now() - b0) / 1000;
      })();
      let built = false;
      void building.then(() => (built = true));
      // Rounds of 1,000 requests (each round's sessions their own: a round's sequences start at 0) until the build is done.
      const rounds: { requestsPerSecond: number; p50: number; p99: number }[] = [];
      while (!built || rounds.length === 0) {
        const r = await ingest({
          prefix: `online-${size}-${rounds.length}`,
          requests: 1000,
          concurrency: 16,
          kind: 'single',
          sessions: 16,
          events: 1,
        });
        rounds.push({ requestsPerSecond: r.throughputPerSecond, p50: r.latencyMs.p50, p99: r.latencyMs.p99 });
      }
      const buildSeconds = await building;
      await untilProcessed(`online-${size}`);
      figures.onlineMigration = {
        buildSeconds: round(buildSeconds, 2),
        builds,
        ingestDuringBuild: { rounds, worstP99: Math.max(...rounds.map((r) => r.p99)) },
      };

      figures.autovacuum = await autovacuum.stop();
      figures.database = await databaseSize(databaseUrl);
      bySize[size] = figures;
      progress(`${size}: ${JSON.stringify(figures)}`);
    }

    return {
      scale: SCALE,
      sizes: Object.fromEntries(
        sizes.map((s) => [s, { events: Math.round(SIZES[s].events * SCALE), organizations: Math.round(SIZES[s].organizations * SCALE) }]),
      ),
      bySize,
      ratios: ratiosToS(bySize),
      seconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    if (worker) await killWorkerProcess(worker);
    await api?.stop();
    await raw.end();
    await pool.end();
    await stopTestStack();
  }
}
