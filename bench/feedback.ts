/**
 * Feedback record creation: throughput and p50/p99 latency of POST /v3/rest/feedback-sources/{id}/records
 * at concurrency 32 (rate limiting off through FEEDBACK_RATE_LIMIT_PER_MINUTE=0), beside a baseline
 * measured in the same run: the same rows inserted straight through `pg` at the same concurrency.
 * The load generator runs in the same process as the API (both share the machine's 2 cores), and
 * the API's pool has as many connections as the baseline's (32).
 */
import pg from 'pg';
import { pino } from 'pino';
import { REDACTED_PATHS } from '../src/logger.js';
import { createDatabasePool } from '../src/db/pool.js';
import { startTestApi } from '../harness/app.js';
import { testConfig } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../harness/stack.js';
import { load, type Summary } from './stats.js';
import { installQuietRuntime } from './runtime.js';

const CONCURRENCY = 32;
const REQUESTS = 4000;
const WARMUP = 300;

const fields = (i: number) => [
  { category: 'content', type: 'string', name: 'body', value: `Feedback number ${i}: the export to CSV drops the last column.` },
  { category: 'created_at', type: 'datetime', name: 'opened_at', value: '2026-11-01T10:00:00Z' },
  { category: 'metadata', type: 'integer', name: 'priority', value: i % 5 },
  { category: 'metadata', type: 'json', name: 'tags', value: ['export', 'csv'] },
  { category: 'identifier', type: 'string', name: 'ticket_url', value: `https://support.example.com/t/${i}` },
];

export async function benchFeedback(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl, { poolSize: CONCURRENCY });
  const config = testConfig({ FEEDBACK_RATE_LIMIT_PER_MINUTE: '0', DATABASE_POOL_SIZE: String(CONCURRENCY) });
  // Logs as in production (JSON at info, one line a request), written to /dev/null.
  const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination('/dev/null'));
  const api = await startTestApi({ pool, databaseUrl, config, logger });
  const raw = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  try {
    const org = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': org.apiKey };
    const source = (await api.request('/v3/rest/feedback-sources', { method: 'POST', headers, json: { name: 'bench', type: 'api' } }))
      .body as { id: number };
    const person = (await api.request('/v3/rest/people', { method: 'PUT', headers, json: { email: 'bench@example.com' } })).body as {
      id: number;
    };
    const path = `/v3/rest/feedback-sources/${source.id}/records`;
    const post = (prefix: string) => async (i: number) => {
      const res = await api.request(path, {
        method: 'POST',
        headers,
        json: { person_id: person.id, display_ts: '2026-11-01T09:00:00Z', external_id: `${prefix}-${i}`, fields: fields(i) },
      });
      if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body as unknown)}`);
    };
    const insert = (prefix: string) => async (i: number) => {
      await raw.query(
        `INSERT INTO feedback_records (organization_id, feedback_source_id, person_id, external_id, display_ts, fields)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (feedback_source_id, external_id) DO NOTHING RETURNING *`,
        [org.organizationId, source.id, person.id, `${prefix}-${i}`, '2026-11-01T09:00:00Z', JSON.stringify(fields(i))],
      );
    };
    await load(WARMUP, CONCURRENCY, post('warm-api'));
    await load(WARMUP, CONCURRENCY, insert('warm-pg'));
    const viaApi: Summary = await load(REQUESTS, CONCURRENCY, post('api'));
    const baseline: Summary = await load(REQUESTS, CONCURRENCY, insert('pg'));
    return {
      benchmark: 'feedback-record-create',
      measuredAt: new Date().toISOString(),
      setup: { concurrency: CONCURRENCY, requests: REQUESTS, warmup: WARMUP, fieldsPerRecord: 5, rateLimit: 'off', poolSize: CONCURRENCY },
      api: viaApi,
      baselinePg: baseline,
      ratio: {
        throughputApiOverPg: Number((viaApi.throughputPerSecond / baseline.throughputPerSecond).toFixed(3)),
        p50ApiOverPg: Number((viaApi.latencyMs.p50 / baseline.latencyMs.p50).toFixed(2)),
        p99ApiOverPg: Number((viaApi.latencyMs.p99 / baseline.latencyMs.p99).toFixed(2)),
      },
    };
  } finally {
    await raw.end();
    await api.close();
    await pool.end();
    await stopTestStack();
  }
}
