import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { MIGRATIONS_DIR } from '../paths.js';

/**
 * Forward-only migrations: plain numbered SQL files in `migrations/`, applied in order, one
 * transaction per file, recorded in `schema_migrations`. A session-level advisory lock serializes
 * concurrent runners (several API replicas starting at once): the second waits, then finds nothing
 * left to do. Files go through the simple query protocol, so a file may hold many statements
 * (Slonik refuses multi-statement queries, after running them).
 */
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

export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = await readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
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

async function applyOne(client: pg.Client, file: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(file.sql);
    await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
      file.version,
      file.name,
      file.checksum,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new Error(`Migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
  }
}
