/**
 * OTLP ingest (issue 35): messages/s through `POST /otel/v1/traces` (protobuf and JSON) beside REST
 * ingest of the same messages, in the same run, against the production entrypoint (the API in its own
 * process) with a client in a process of its own. Every request is a new session of TURNS turns
 * (20 messages): REST sends them as events with their sequences; OTLP as one model call's span a
 * turn, whose sequences Intake assigns. The three alternate over ROUNDS rounds, and the medians are
 * compared (goal: OTLP >= 0.8 x REST). BENCH_PROFILE_DIR: the API process writes a V8 CPU profile there.
 */
import { createDatabasePool } from '../src/db/pool.js';
import { createApplication, issueCredential } from '../src/agents/applications.js';
import { startApiProcess } from '../harness/api-process.js';
import { TEST_SIGNING_SECRET } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack, testStack } from '../harness/stack.js';
import type { OtlpLoad } from './otlp-ingest-client.js';
import { clientProcess } from './client-process.js';
import { median, type Summary } from './stats.js';
import { installQuietRuntime } from './runtime.js';

const TURNS = 10;
const REQUESTS = Number(process.env.BENCH_OTLP_REQUESTS ?? 300);
const CONCURRENCY = 8;
const ROUNDS = 5;
const FORMATS = ['rest', 'protobuf', 'json'] as const;

export async function benchOtlpIngest(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const databaseUrl = await createTestDatabase();
  const stack = await testStack();
  const pool = await createDatabasePool(databaseUrl, { poolSize: 2 });
  // BENCH_PROFILE_DIR: the API process writes a V8 CPU profile there when it stops.
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const api = await startApiProcess(
    {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      AGENT_INGEST_RATE_LIMIT_PER_MINUTE: '0',
    },
    { execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  try {
    const org = await createTestOrg(pool, { credits: 1_000_000 });
    const app = await createApplication(pool, { organizationId: org.organizationId, name: 'bench', agentKey: 'bench' });
    const { secret } = await issueCredential(pool, app);
    const client = async (phase: Pick<OtlpLoad, 'prefix' | 'requests' | 'format'>): Promise<Summary> => {
      const spec: OtlpLoad = { url: api.url, secret, concurrency: CONCURRENCY, turns: TURNS, ...phase };
      return clientProcess('otlp-ingest-client.ts', spec);
    };
    for (const format of FORMATS) await client({ prefix: `warm-${format}`, requests: 40, format });
    const rounds: Record<(typeof FORMATS)[number], Summary[]> = { rest: [], protobuf: [], json: [] };
    for (let r = 0; r < ROUNDS; r++)
      for (const format of FORMATS) rounds[format].push(await client({ prefix: `r${r}-${format}`, requests: REQUESTS, format }));
    const messagesPerSecond = (format: (typeof FORMATS)[number]) =>
      Number(median(rounds[format].map((s) => s.throughputPerSecond * 2 * TURNS)).toFixed(1));
    const rest = messagesPerSecond('rest');
    const protobufRate = messagesPerSecond('protobuf');
    const json = messagesPerSecond('json');
    return {
      setup: { turnsPerRequest: TURNS, messagesPerRequest: 2 * TURNS, requests: REQUESTS, concurrency: CONCURRENCY, rounds: ROUNDS },
      messagesPerSecond: { rest, protobuf: protobufRate, json },
      p50Ms: Object.fromEntries(FORMATS.map((f) => [f, median(rounds[f].map((s) => s.latencyMs.p50))])),
      ratio: { protobufOverRest: Number((protobufRate / rest).toFixed(2)), jsonOverRest: Number((json / rest).toFixed(2)) },
      rounds,
    };
  } finally {
    await api.stop();
    await pool.end();
    await stopTestStack();
  }
}
