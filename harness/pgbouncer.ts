import { execFile, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { chown, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, isPortOpen, sleep } from '../src/dev/net.js';
import { postgresUser } from '../src/dev/postgres.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { stopChild } from './temporal-cluster.js';

const run = promisify(execFile);

/**
 * PgBouncer in transaction mode with docker-compose.yml's configuration (deploy/pgbouncer/pgbouncer.ini),
 * in front of a PostgreSQL server of this machine: the file's addresses and auth file replaced by
 * this machine's, nothing else changed. The binary is PgBouncer 1.24.1, built once into a cache
 * outside the clone by `.ci/pgbouncer`.
 */
export interface Pgbouncer {
  /** `127.0.0.1:<port>`: what replaces `pgbouncer:6432` in the compose file's URLs. */
  address: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** The cache directory with bin/pgbouncer (built on first use: about 10 s). */
export async function pgbouncerBuild(): Promise<string> {
  const { stdout } = await run(path.join(PROJECT_ROOT, '.ci', 'pgbouncer'), [], { maxBuffer: 1 << 24, timeout: 10 * 60_000 });
  return stdout.trim().split('\n').at(-1)!;
}

/** Replaces `from` in `text`, which must hold it: a change to the compose file's configuration fails here, not silently. */
function replaceIn(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`deploy/pgbouncer/pgbouncer.ini no longer holds ${JSON.stringify(from)}`);
  return text.split(from).join(to);
}

/**
 * deploy/pgbouncer/pgbouncer.ini with the compose network's addresses replaced: PostgreSQL at
 * `postgres` (`host:port`), PgBouncer on 127.0.0.1:`port`, and the auth file at `authFile` (else
 * where the image's entrypoint writes it). Nothing else changes.
 */
export async function pgbouncerIniHere(o: { postgres: string; port: number; authFile?: string }): Promise<string> {
  const [pgHost, pgPort] = o.postgres.split(':');
  let ini = await readFile(path.join(PROJECT_ROOT, 'deploy', 'pgbouncer', 'pgbouncer.ini'), 'utf8');
  ini = replaceIn(ini, 'host=postgres port=5432', `host=${pgHost} port=${pgPort}`);
  ini = replaceIn(ini, 'listen_addr = *', 'listen_addr = 127.0.0.1');
  ini = replaceIn(ini, 'listen_port = 6432', `listen_port = ${o.port}`);
  if (o.authFile) ini = replaceIn(ini, 'auth_file = /var/run/postgresql/pgbouncer-userlist.txt', `auth_file = ${o.authFile}`);
  return ini;
}

export async function startPgbouncer(o: {
  dir: string;
  /** Where PostgreSQL listens here (`host:port`). */
  postgres: string;
  user: string;
  password: string;
}): Promise<Pgbouncer> {
  const build = await pgbouncerBuild();
  await mkdir(o.dir, { recursive: true });
  // PgBouncer refuses to run as root: as root it runs as the `postgres` user (which the embedded
  // PostgreSQL runs as), on files of its own in a directory that user can reach.
  const ids = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const filesDir = ids ? await mkdtemp(path.join(os.tmpdir(), 'intake-pgbouncer-')) : o.dir;
  if (ids) await chown(filesDir, ids.uid, ids.gid);
  const port = await freePort();
  const userlist = path.join(filesDir, 'userlist.txt');
  const config = path.join(filesDir, 'pgbouncer.ini');
  await writeFile(config, await pgbouncerIniHere({ postgres: o.postgres, port, authFile: userlist }));
  // What deploy/pgbouncer/entrypoint.sh writes from POSTGRES_PASSWORD.
  await writeFile(userlist, `"${o.user}" "${o.password}"\n`, { mode: 0o600 });
  // Under a root's 0700 home the cache is out of that user's reach: the binary is copied beside its files.
  const binary = ids ? path.join(filesDir, 'pgbouncer') : path.join(build, 'bin', 'pgbouncer');
  if (ids) await copyFile(path.join(build, 'bin', 'pgbouncer'), binary);
  if (ids) for (const file of [config, userlist, binary]) await chown(file, ids.uid, ids.gid);
  const log = createWriteStream(path.join(o.dir, 'pgbouncer.log'));
  const child = spawn(binary, [config], { stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const deadline = Date.now() + 20_000;
  while (!(await isPortOpen(port))) {
    if (child.exitCode !== null) throw new Error(`PgBouncer exited with ${child.exitCode} (see ${o.dir}/pgbouncer.log)`);
    if (Date.now() > deadline) throw new Error(`PgBouncer does not listen on ${port} (see ${o.dir}/pgbouncer.log)`);
    await sleep(50);
  }
  return {
    address: `127.0.0.1:${port}`,
    get pid() {
      return child.pid!;
    },
    async stop() {
      await stopChild(child, 5_000);
      log.end();
      if (ids) await rm(filesDir, { recursive: true, force: true });
    },
  };
}
