/**
 * Agent chat ingest: throughput (events/s) and p50/p99 latency of POST /v3/rest/agent-conversations/ingest
 * for (a) 500-event requests, each a new session, and (b) single-event requests at concurrency 32
 * spread over many sessions, sent by a client in its own process (bench/agent-ingest-client.ts); beside a baseline measured in the same run: the same event rows
 * inserted straight through `pg` (one multi-row statement per 500-event batch, one insert per single
 * event). The API path also sanitizes every string (secretlint + patterns), takes the session lock,
 * checks the revision rules and signal-with-starts the session workflow on the real Temporal server.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pg from 'pg';
import { pino } from 'pino';
import { REDACTED_PATHS } from '../src/logger.js';
import { createDatabasePool } from '../src/db/pool.js';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import type { AgentEvent } from '../src/domain/agent-ingest.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { event, TEXT, type IngestLoad } from './agent-events.js';
import { startTestApi } from '../test/helpers/app.js';
import { testConfig } from '../test/helpers/config.js';
import { createTestOrg } from '../test/helpers/fixtures.js';
import { createTestDatabase, stopTestStack } from '../test/helpers/stack.js';
import { load, type Summary } from './stats.js';

const run = promisify(execFile);
const CONCURRENCY = 32;
const BATCH = { requests: 40, concurrency: 4, events: 500 };
const SINGLE = { requests: 3000, sessions: 300 };

const perEvent = (s: Summary, events: number) => ({ ...s, eventsPerSecond: Number((s.throughputPerSecond * events).toFixed(1)) });
const ratio = (api: Summary, base: Summary) => ({
  throughputApiOverPg: Number((api.throughputPerSecond / base.throughputPerSecond).toFixed(3)),
  p50ApiOverPg: Number((api.latencyMs.p50 / base.latencyMs.p50).toFixed(2)),
  p99ApiOverPg: Number((api.latencyMs.p99 / base.latencyMs.p99).toFixed(2)),
});

export async function benchAgentIngest(): Promise<Record<string, unknown>> {
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('ERROR') });
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl, { poolSize: CONCURRENCY });
  const config = testConfig({ DATABASE_POOL_SIZE: String(CONCURRENCY) });
  const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination('/dev/null'));
  const api = await startTestApi({ pool, config, logger });
  const raw = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  try {
    const org = await createTestOrg(pool, { credits: 1000 });
    const app = await createApplication(pool, { organizationId: org.organizationId, name: 'bench', agentKey: 'bench' });
    const { secret } = await issueCredential(pool, app);
    // The HTTP client runs in a process of its own, as an integrator's does.
    const client = async (phase: Pick<IngestLoad, 'prefix' | 'requests' | 'concurrency' | 'kind'>): Promise<Summary> => {
      const spec: IngestLoad = { url: api.url, secret, sessions: SINGLE.sessions, events: BATCH.events, ...phase };
      const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', 'agent-ingest-client.ts'), JSON.stringify(spec)], {
        cwd: PROJECT_ROOT, maxBuffer: 1 << 20,
      });
      return JSON.parse(stdout) as Summary;
    };
    const batchEvents = Array.from({ length: BATCH.events }, (_, i) => event(i));

    // Baseline: sessions made up front, then the same event rows through pg.
    const session = async () => (await raw.query<{ id: string }>(
      'INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES ($1, $2, $3) RETURNING id',
      [org.organizationId, app.id, randomUUID()],
    )).rows[0]!.id;
    const rows = (events: AgentEvent[]) => JSON.stringify(events.map((e) => ({ ...e, content_hash: '00', payload: { content: e.content } })));
    const insertBatch = async (sessionId: string, events: AgentEvent[]) => {
      await raw.query(
        `INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
         SELECT $1, x."externalEventId", x.sequence, x.revision, x.type, x."occurredAt", x.final, decode(x.content_hash, 'hex'), x.payload
         FROM jsonb_to_recordset($2::jsonb) AS x("externalEventId" text, sequence bigint, revision int, type text, "occurredAt" timestamptz, final boolean, content_hash text, payload jsonb)`,
        [sessionId, rows(events)],
      );
    };
    const batchSessions = await Promise.all(Array.from({ length: BATCH.requests + 4 }, session));
    const singleSessions = await Promise.all(Array.from({ length: SINGLE.sessions }, session));

    await client({ prefix: 'warm', requests: 4, concurrency: BATCH.concurrency, kind: 'batch' });
    const apiBatch = await client({ prefix: 'batch', requests: BATCH.requests, concurrency: BATCH.concurrency, kind: 'batch' });
    await load(4, BATCH.concurrency, (i) => insertBatch(batchSessions[BATCH.requests + i]!, batchEvents));
    const pgBatch = await load(BATCH.requests, BATCH.concurrency, (i) => insertBatch(batchSessions[i]!, batchEvents));
    await client({ prefix: 'warm-single', requests: 300, concurrency: CONCURRENCY, kind: 'single' });
    const apiSingle = await client({ prefix: 'single', requests: SINGLE.requests, concurrency: CONCURRENCY, kind: 'single' });
    // The physical limit of single-row commits on this disk is reached at a few writers and falls
    // with more (each commit waits for its fsync): the baseline is the best writer count.
    const pgSingleByWriters: Record<string, Summary> = {};
    for (const writers of [1, 2, 4, 8, 16, 32]) {
      pgSingleByWriters[writers] = await load(SINGLE.requests, writers, (i) => insertBatch(singleSessions[i % SINGLE.sessions]!, [event(10_000 * writers + Math.floor(i / SINGLE.sessions))]));
    }
    const pgSingle = Object.values(pgSingleByWriters).reduce((best, s) => (s.throughputPerSecond > best.throughputPerSecond ? s : best));
    return {
      benchmark: 'agent-ingest',
      measuredAt: new Date().toISOString(),
      setup: { batch: BATCH, single: { ...SINGLE, concurrency: CONCURRENCY }, poolSize: CONCURRENCY, contentBytesPerEvent: Buffer.byteLength(TEXT) + 6 },
      batchOf500: { api: perEvent(apiBatch, BATCH.events), baselinePg: perEvent(pgBatch, BATCH.events), ratio: ratio(apiBatch, pgBatch) },
      singleEvent: {
        api: perEvent(apiSingle, 1), baselinePg: perEvent(pgSingle, 1), ratio: ratio(apiSingle, pgSingle),
        baselinePgByWriters: Object.fromEntries(Object.entries(pgSingleByWriters).map(([w, s]) => [w, { throughputPerSecond: s.throughputPerSecond, p99: s.latencyMs.p99 }])),
      },
    };
  } finally {
    await raw.end();
    await api.close();
    await pool.end();
    await stopTestStack();
  }
}
