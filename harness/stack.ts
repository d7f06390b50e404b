import { createWriteStream } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { extendEventPartitions } from '../src/agents/event-partitions.js';
import { migrate } from '../src/db/migrate.js';
import { createDatabasePool } from '../src/db/pool.js';
import { freePort } from '../src/dev/net.js';
import { startLocalPostgres, type LocalPostgres } from '../src/dev/postgres.js';
import { findTemporalCli } from '../src/dev/temporal-cli.js';
import { startLocalTemporal, type LocalTemporal } from '../src/dev/temporal-server.js';
import { workflowBundleOptions } from '../src/temporal/build-bundle.js';

/**
 * One real PostgreSQL and one real Temporal dev server per test run, started on first use on free
 * ports and stopped by the root hook. Each test file gets a fresh database cloned from a migrated
 * template, and each suite its own task queue.
 */
export interface TestStack {
  postgres: LocalPostgres;
  temporal: LocalTemporal;
  tmpDir: string;
}

const TEMPLATE = 'intake_template';

/**
 * Kept on globalThis, not in module variables: mocha loads a test file with require() (tsx's
 * CommonJS transform) or, when that fails (top-level await somewhere in its imports), with
 * import(); the two give two instances of this module, which must still share one stack.
 */
interface Shared {
  stack?: Promise<TestStack> | undefined;
  bundle?: Promise<{ code: string }> | undefined;
  databases: number;
  /** Benchmarks: PostgreSQL with the durability `npm start` runs with (fsync on). */
  durable?: boolean;
}
const shared: Shared = ((globalThis as { __intakeTestStack?: Shared }).__intakeTestStack ??= { databases: 0 });

/** A benchmark's PostgreSQL: `pg_stat_statements`, and with BENCH_AUTO_EXPLAIN_MS the slow statements' plans in a log. */
function benchPostgres(tmpDir: string) {
  const explainMs = process.env.BENCH_AUTO_EXPLAIN_MS;
  if (!explainMs) return { preload: ['pg_stat_statements'] };
  const logFile = process.env.BENCH_POSTGRES_LOG ?? path.join(tmpDir, 'pg.log');
  process.stderr.write(`PostgreSQL logs the plans of statements over ${explainMs} ms to ${logFile}\n`);
  // Written as it comes, not synchronously: this process also runs the benchmark's API and load.
  const log = createWriteStream(logFile, { flags: 'a' });
  return {
    preload: ['pg_stat_statements', 'auto_explain'],
    settings: { 'auto_explain.log_min_duration': `${explainMs}ms`, 'auto_explain.log_format': 'text' },
    onLog: (chunk: string) => void log.write(chunk),
  };
}

async function start(): Promise<TestStack> {
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'intake-test-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to reach its data dir.
  await chmod(tmpDir, 0o755);
  const [postgres, temporal] = await Promise.all([
    startLocalPostgres({
      dataDir: path.join(tmpDir, 'pg'),
      port: await freePort(),
      persistent: false,
      fast: !shared.durable,
      // Benchmarks: the statements each phase runs (bench/data-path.ts); BENCH_AUTO_EXPLAIN_MS also
      // logs the plan of every statement slower than that to BENCH_POSTGRES_LOG (default pg.log in the stack's directory).
      ...(shared.durable ? benchPostgres(tmpDir) : {}),
    }),
    startTestTemporal(path.join(tmpDir, 'temporal.log')),
  ]);
  await postgres.createDatabase(TEMPLATE);
  await migrate(postgres.url(TEMPLATE));
  // As the API does after its migrations: the weekly partitions, and UUIDv7 session ids (decision 0216).
  const pool = await createDatabasePool(postgres.url(TEMPLATE));
  await extendEventPartitions(pool).finally(() => pool.end());
  return { postgres, temporal, tmpDir };
}

/**
 * A Temporal dev server of its own (headless, namespace `default`, a free port, its log in `logFile`):
 * the test stack's, or a second, empty one (a restore test, a release's fixture).
 */
export async function startTestTemporal(logFile: string): Promise<LocalTemporal> {
  const config = loadConfig();
  return startLocalTemporal({
    cliPath: await findTemporalCli(config.temporal.cliPath, (m) => process.stderr.write(`${m}\n`), config.toolsDir),
    port: await freePort(),
    uiPort: null,
    namespace: 'default',
    logFile,
  });
}

/** The names of the migrations applied to `url`'s database, in order (`schema_migrations`). */
export async function appliedMigrations(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version')).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

/**
 * Benchmarks call this before anything starts the stack: PostgreSQL then runs with fsync on, as
 * `npm start` does (tests trade durability for speed).
 */
export function useDurablePostgres(): void {
  if (shared.stack) throw new Error('useDurablePostgres() must come before the test stack starts');
  shared.durable = true;
}

export function testStack(): Promise<TestStack> {
  shared.stack ??= start();
  return shared.stack;
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(): Promise<string> {
  const { postgres } = await testStack();
  const name = `test_${process.pid}_${++shared.databases}`;
  await postgres.createDatabase(name, TEMPLATE);
  return postgres.url(name);
}

/** An empty database (no migrations), for the migration runner's own tests. */
export async function createEmptyDatabase(): Promise<string> {
  const { postgres } = await testStack();
  const name = `empty_${process.pid}_${++shared.databases}`;
  await postgres.createDatabase(name);
  return postgres.url(name);
}

/** The workflow bundle, built once per run and shared by every test worker. */
export function workflowBundle(): Promise<{ code: string }> {
  shared.bundle ??= bundleWorkflowCode({ ...workflowBundleOptions(), logger: quietLogger });
  return shared.bundle;
}

const noop = () => undefined;
export const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

export async function stopTestStack(): Promise<void> {
  if (!shared.stack) return;
  const s = await shared.stack;
  shared.stack = undefined;
  await Promise.allSettled([s.temporal.stop(), s.postgres.stop()]);
  await rm(s.tmpDir, { recursive: true, force: true });
}
