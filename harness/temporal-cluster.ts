import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { canListen, sleep } from '../src/dev/net.js';
import { PROJECT_ROOT } from '../src/paths.js';

const run = promisify(execFile);

/**
 * The production Temporal server (the `server` binary of go.temporal.io/server v1.32.2, all four
 * services in one process) with PostgreSQL persistence, as operators run it: its schemas set up by
 * its own SQL tool. Built once into a cache outside the clone by `.ci/temporal-server`.
 */
export interface TemporalCluster {
  address: string;
  namespace: string;
  /** The server process (its CPU and memory are measured by measure-history-shards.ts); a restart changes it. */
  readonly pid: number;
  /** Stops the server (SIGTERM, SIGKILL after 10 s) and starts it again on the same ports and databases: clients reconnect. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The cache directory with bin/server, bin/sql and schema/ (built on first use: a few minutes). */
export async function temporalServerBuild(): Promise<string> {
  const { stdout } = await run(path.join(PROJECT_ROOT, '.ci', 'temporal-server'), [], { maxBuffer: 1 << 24, timeout: 20 * 60_000 });
  return stdout.trim().split('\n').at(-1)!;
}

/**
 * Creates the server's two databases on `postgresUrl`'s server and sets up their schemas, with the
 * script docker-compose.yml runs (deploy/temporal/setup-schema.sh), twice: a second run (a restart,
 * an upgrade) must succeed too.
 */
async function setUpSchemas(build: string, postgresUrl: string): Promise<{ host: string; port: string; user: string; password: string }> {
  const url = new URL(postgresUrl);
  const db = { host: url.hostname, port: url.port, user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  const env = {
    PATH: process.env.PATH ?? '',
    SQL_TOOL: path.join(build, 'bin', 'sql'),
    SCHEMA_DIR: path.join(build, 'schema'),
    POSTGRES_SEEDS: db.host,
    DB_PORT: db.port,
    POSTGRES_USER: db.user,
    POSTGRES_PWD: db.password,
  };
  const script = path.join(PROJECT_ROOT, 'deploy', 'temporal', 'setup-schema.sh');
  for (let i = 0; i < 2; i++) await run(script, [], { env });
  return db;
}

/**
 * Starts the cluster on the PostgreSQL server of `postgresUrl` (its databases `temporal` and
 * `temporal_visibility` are created), registers `namespace`, and resolves once it serves.
 */
export async function startTemporalCluster(o: {
  postgresUrl: string;
  dir: string;
  namespace?: string;
  /** `numHistoryShards`: docker-compose.yml's NUM_HISTORY_SHARDS in the fleet test. */
  historyShards?: number;
}): Promise<TemporalCluster> {
  const build = await temporalServerBuild();
  await mkdir(o.dir, { recursive: true });
  const db = await setUpSchemas(build, o.postgresUrl);
  const taken = new Set<number>();
  const port = () => lowPort(taken);
  const ports = { frontend: await port(), http: await port(), history: await port(), matching: await port(), worker: await port() };
  const membership = [await port(), await port(), await port(), await port()];
  const store = (database: string, conns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${db.host}:${db.port}`,
      connectProtocol: 'tcp',
      user: db.user,
      password: db.password,
      maxConns: conns,
      maxIdleConns: conns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, extra: Record<string, number> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  const frontend = `127.0.0.1:${ports.frontend}`;
  // JSON is YAML: the server reads this file as its configuration.
  const config = {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'pg-default',
      visibilityStore: 'pg-visibility',
      numHistoryShards: o.historyShards ?? 4,
      datastores: { 'pg-default': store('temporal', 20), 'pg-visibility': store('temporal_visibility', 10) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: rpc(ports.frontend, membership[0]!, { httpPort: ports.http }),
      history: rpc(ports.history, membership[1]!),
      matching: rpc(ports.matching, membership[2]!),
      worker: rpc(ports.worker, membership[3]!),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: frontend,
          httpAddress: `127.0.0.1:${ports.http}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: path.join(o.dir, 'dynamic.yaml'), pollInterval: '10s' },
  };
  await writeFile(path.join(o.dir, 'config.yaml'), JSON.stringify(config, null, 2));
  // The same dynamic settings as the dev server the other tests use (src/dev/temporal-server.ts).
  await writeFile(
    path.join(o.dir, 'dynamic.yaml'),
    [
      'frontend.enableUpdateWorkflowExecution:',
      '  - value: true',
      'frontend.enableUpdateWorkflowExecutionAsyncAccepted:',
      '  - value: true',
      'limit.maxIDLength:',
      '  - value: 255',
      '',
    ].join('\n'),
  );
  const log = createWriteStream(path.join(o.dir, 'server.log'), { flags: 'a' });
  const namespace = o.namespace ?? 'default';
  /** Starts the server on the configuration above and resolves once it serves `namespace`. */
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(path.join(build, 'bin', 'server'), ['--config-file', path.join(o.dir, 'config.yaml'), '--allow-no-auth', 'start'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    try {
      await serving(child, frontend, namespace);
    } catch (error) {
      child.kill('SIGKILL');
      const tail = (await readFile(path.join(o.dir, 'server.log'), 'utf8').catch(() => '')).slice(-3000);
      throw new Error(`${error instanceof Error ? error.message : String(error)}; its log ends with:\n${tail}`);
    }
    return child;
  };
  let child = await launch();
  return {
    address: frontend,
    namespace,
    get pid() {
      return child.pid!;
    },
    async restart() {
      await stopChild(child);
      child = await launch();
    },
    async stop() {
      await stopChild(child);
      log.end();
    },
  };
}

/**
 * A free port below 32768: the server keeps membership ports in a smallint column (ephemeral ports,
 * which the OS hands out for port 0, are above it).
 */
async function lowPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(candidate) && (await canListen(candidate, '127.0.0.1'))) {
      taken.add(candidate);
      return candidate;
    }
  }
}

/** Waits for the frontend, then registers the namespace (once: it is kept in PostgreSQL). */
async function serving(child: ChildProcess, address: string, namespace: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Temporal server exited with ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService
          .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('24h') })
          .catch((error: { code?: number }) => {
            if (error.code !== 6) throw error; // ALREADY_EXISTS
          });
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone (at once if it already is). */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
