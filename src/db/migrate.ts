import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR } from '../paths.js';

/**
 * Forward-only migrations: plain numbered SQL files in `migrations/`, applied in order, one
 * transaction per file, recorded in `schema_migrations`. A session-level advisory lock serializes
 * concurrent runners (several API replicas starting at once): the second waits (trying the lock again
 * every 100 ms), then finds nothing left to do. Files go through the simple query protocol, so a file may hold many statements
 * (Slonik refuses multi-statement queries, after running them).
 *
 * A file whose first line is NO_TRANSACTION_MARKER builds indexes without blocking writes: it holds
 * only `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS` statements (each ending with `;` at the end
 * of a line), run one at a time outside a transaction, then the file is recorded. A build cut short
 * (a runner killed) leaves an invalid index: the next run drops it and builds it again.
 */
export const NO_TRANSACTION_MARKER = '-- intake:no-transaction';
const CONCURRENT_INDEX = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+([a-z_][a-z0-9_]*)\s/i;
const LOCK_KEY = 7_246_373_001; // arbitrary constant shared by every runner of this schema
const FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const match = FILE_PATTERN.exec(name);
    if (!match) throw new Error(`Migration file name must look like 0001_name.sql: ${name}`);
    const sql = await readFile(path.join(dir, name), 'utf8');
    files.push({ version: Number(match[1]), name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  const versions = new Set(files.map((f) => f.version));
  if (versions.size !== files.length) throw new Error('Two migration files share a version number');
  return files;
}

/** How often a runner waiting for another's lock tries again. */
const LOCK_RETRY_MS = 100;

/**
 * The runners' advisory lock, tried until taken rather than waited for: a runner blocked in
 * pg_advisory_lock holds a snapshot for as long as it waits, and CREATE INDEX CONCURRENTLY in the
 * runner holding the lock waits for every older snapshot, so the two would deadlock.
 */
async function takeLock(client: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LOCK_KEY]);
    if (rows[0]?.ok) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = await readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await takeLock(client);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
        'SELECT version, name, checksum FROM schema_migrations',
      );
      const done = new Map(rows.map((r) => [r.version, r]));
      const applied: string[] = [];
      for (const file of files) {
        const previous = done.get(file.version);
        if (previous) {
          if (previous.checksum !== file.checksum) {
            throw new Error(`Migration ${file.name} changed after it was applied; add a new migration instead`);
          }
          continue;
        }
        await applyOne(client, file);
        applied.push(file.name);
      }
      return { applied, alreadyApplied: files.length - applied.length };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

/** A no-transaction file's statements, comments dropped. */
export function concurrentStatements(file: MigrationFile): { statement: string; index: string }[] {
  const statements = file.sql
    .split(/;[ \t]*$/m)
    .map((part) =>
      part
        .split('\n')
        .filter((line) => !line.trim().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter(Boolean);
  return statements.map((statement) => {
    const index = CONCURRENT_INDEX.exec(statement)?.[1];
    if (!index)
      throw new Error(`Migration ${file.name}: a no-transaction file holds only CREATE INDEX CONCURRENTLY IF NOT EXISTS statements`);
    return { statement, index };
  });
}

async function applyConcurrently(client: pg.Client, file: MigrationFile): Promise<void> {
  for (const { statement, index } of concurrentStatements(file)) {
    const { rowCount } = await client.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
      [index],
    );
    if (rowCount) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
    await client.query(statement);
  }
  await record(client, file);
}

async function applyOne(client: pg.Client, file: MigrationFile): Promise<void> {
  try {
    if (file.sql.startsWith(NO_TRANSACTION_MARKER)) await applyConcurrently(client, file);
    else await applyInTransaction(client, file);
  } catch (error) {
    throw new Error(`Migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
  }
}

async function applyInTransaction(client: pg.Client, file: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(file.sql);
    await record(client, file);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** The file, applied: in schema_migrations. */
async function record(client: pg.Client, file: MigrationFile): Promise<void> {
  await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
    file.version,
    file.name,
    file.checksum,
  ]);
}
