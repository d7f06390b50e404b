import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../src/dev/net.js';
import { startLocalPostgres, type LocalPostgres, type LocalPostgresOptions } from '../src/dev/postgres.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { composeEnvironments, onThisMachine } from './compose-env.js';
import { TEST_OPERATOR_TOKEN, TEST_SIGNING_SECRET, testConfig } from './config.js';
import { startPgbouncer, type Pgbouncer } from './pgbouncer.js';
import { productionBuild } from './production-build.js';
import { startTestS3, TEST_S3_CREDENTIALS, type TestS3 } from './s3.js';
import { startTemporalCluster, stopChild, type TemporalCluster } from './temporal-cluster.js';
import { httpStatus, waitFor } from './wait.js';

/** A production process of the fleet (`node dist/src/main/...`), its output kept in `<dir>/<name>.log`. */
export interface FleetProc {
  name: string;
  role: 'api' | 'worker';
  child: ChildProcess;
  /** An API replica's base URL. */
  url?: string;
  /** The process's metrics port (a worker's also serves /healthz). */
  metricsPort: number;
}

/**
 * The fleet on one machine, as processes, the way docker-compose.yml runs it: PostgreSQL (fsync on),
 * PgBouncer in transaction mode in front of it (the processes' pools), the production Temporal server on it, the bucket (moto), API replicas and workers from the
 * `npm run build` output with the environment the compose file gives the api and worker services.
 * The fleet test (test/topology/fleet.test.ts) and the soak benchmark (bench/soak.ts) run on it.
 */
export interface Fleet {
  dir: string;
  readonly postgres: LocalPostgres;
  /** The processes' pools go through it (DATABASE_URL); migrations, LISTEN and upload locks go straight to PostgreSQL (DATABASE_SESSION_URL). */
  pgbouncer: Pgbouncer;
  cluster: TemporalCluster;
  s3: TestS3;
  /** The environment every API and worker process gets. */
  env: Record<string, string>;
  /** docker-compose.yml's NUM_HISTORY_SHARDS, which the cluster was created with. */
  historyShards: number;
  /** Every process started, in order (exited ones included). */
  procs: FleetProc[];
  /** The `intake` database's URL (as the superuser `postgres`: tests read and check with it). */
  databaseUrl: string;
  /** Starts an API replica (on `port`, or a free one) and resolves with its URL once /readyz answers 200. */
  startApi(name: string, port?: number): Promise<FleetProc>;
  /** Starts a worker and resolves once its /healthz says its Temporal workers run. */
  startWorker(name: string): Promise<FleetProc>;
  /** Sends `signal` (SIGKILL by default) and waits for the exit. */
  kill(proc: FleetProc, signal?: NodeJS.Signals): Promise<void>;
  /** PostgreSQL stopped (a fast shutdown: every connection is closed) and started again on the same data and port. */
  restartPostgres(): Promise<void>;
  /** Stops every process (SIGTERM, then SIGKILL after 20 s), the cluster, the bucket and PostgreSQL, and deletes `dir`'s data. */
  stop(): Promise<void>;
}

/** Whether a process of the fleet is still running (neither exited nor killed by a signal). */
export function isRunning(proc: FleetProc): boolean {
  return proc.child.exitCode === null && proc.child.signalCode === null;
}

export async function startFleet(o: {
  /** Where the processes' logs, PostgreSQL's data and the cluster's files go (deleted by stop). */
  dir: string;
  /** API replicas' names; the first stands in for the load balancer that PUBLIC_BASE_URL names. */
  apis: string[];
  workers: string[];
  /** On top of the compose file's environment (test-only waits, allowed hosts). */
  extraEnv?: Record<string, string>;
  /** PostgreSQL's further settings (`-c name=value`). */
  postgresSettings?: Record<string, string>;
  /** false: the pools go straight to PostgreSQL too (the pooler benchmark's baseline); PgBouncer still runs. */
  pooler?: boolean;
}): Promise<Fleet> {
  // The production build: compiled JavaScript and the prebuilt workflow bundle.
  await productionBuild();
  const pgOptions: LocalPostgresOptions = {
    dataDir: path.join(o.dir, 'pg'),
    port: await freePort(),
    // Kept across restarts; stop() deletes it.
    persistent: true,
    fast: false,
    ...(o.postgresSettings ? { settings: o.postgresSettings } : {}),
  };
  let postgres = await startLocalPostgres(pgOptions);
  await postgres.createDatabase('intake');
  // The bucket docker-compose.yml creates.
  const s3 = await startTestS3('intake');
  // The compose file's database role: the superuser `intake` with its default password.
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query("CREATE ROLE intake LOGIN SUPERUSER PASSWORD 'intake'");
  await admin.end();
  // docker-compose.yml's pgbouncer service: its configuration, in front of this PostgreSQL (which
  // keeps its port across restarts, so PgBouncer follows one).
  const pgbouncer = await startPgbouncer({
    dir: path.join(o.dir, 'pgbouncer'),
    postgres: new URL(postgres.url('intake')).host,
    user: 'intake',
    password: 'intake',
  });
  // What a fleet shares: PostgreSQL, Temporal and the bucket (uploads and media). The processes get
  // the environment docker-compose.yml gives the api and worker services (its required variables
  // set here), with the compose network's addresses replaced by this machine's.
  const ports = await Promise.all(o.apis.map(() => freePort()));
  const payloadKey = testConfig().temporal.payloadKeys![0]!;
  const compose = await composeEnvironments(['api', 'worker', 'temporal'], {
    SIGNING_SECRET: TEST_SIGNING_SECRET,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    S3_SECRET_ACCESS_KEY: TEST_S3_CREDENTIALS.secretAccessKey,
    GRAFANA_ADMIN_PASSWORD: 'test-grafana-password',
    // The key the tests' own Temporal clients decode with.
    TEMPORAL_PAYLOAD_KEYS: `${payloadKey.id}:${Buffer.from(payloadKey.key).toString('base64')}`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports[0]}`,
  });
  assert.deepEqual(compose.worker, compose.api, 'the API and the worker share one environment');
  assert.equal(compose.api.NODE_ENV, 'production');
  // The Temporal server with the file's history shard count (fixed when its database is created).
  const historyShards = Number(compose.temporal.NUM_HISTORY_SHARDS);
  const cluster = await startTemporalCluster({ postgresUrl: postgres.url('postgres'), dir: path.join(o.dir, 'temporal'), historyShards });
  const machine = onThisMachine(compose.api, {
    'postgres:5432': new URL(postgres.url('intake')).host,
    'pgbouncer:6432': pgbouncer.address,
    'temporal:7233': cluster.address,
    'seaweedfs:8333': new URL(s3.endpoint).host,
  });
  const env = {
    ...machine,
    ...(o.pooler === false ? { DATABASE_URL: machine.DATABASE_SESSION_URL!, DATABASE_POOL_MODE: 'session' } : {}),
    ...o.extraEnv,
  };
  const procs: FleetProc[] = [];
  const launch = async (name: string, role: FleetProc['role'], extra: Record<string, string>): Promise<FleetProc> => {
    const metricsPort = await freePort();
    const log = createWriteStream(path.join(o.dir, `${name}.log`));
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'src', 'main', `${role}.js`)], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env, METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    const proc: FleetProc = { name, role, child, metricsPort };
    procs.push(proc);
    return proc;
  };
  const up = async (proc: FleetProc, url: string) =>
    assert.ok(
      await waitFor(async () => (await httpStatus(url)) === 200, 60_000),
      `${proc.name} is not ready (see ${o.dir}/${proc.name}.log)`,
    );
  /** Stops every process (SIGTERM, SIGKILL after `graceMs`), then the Temporal server, the bucket and PostgreSQL. */
  const stopAll = async (graceMs: number) => {
    await Promise.all(procs.map(({ child }) => stopChild(child, graceMs)));
    await cluster.stop();
    await s3.stop();
    await pgbouncer.stop();
    await postgres.stop();
  };
  const fleet: Fleet = {
    dir: o.dir,
    get postgres() {
      return postgres;
    },
    pgbouncer,
    cluster,
    s3,
    env,
    historyShards,
    procs,
    databaseUrl: postgres.url('intake'),
    async startApi(name, port) {
      const listen = port ?? (await freePort());
      const proc = await launch(name, 'api', { PORT: String(listen), HOST: '127.0.0.1', STORAGE_DIR: path.join(o.dir, `${name}-storage`) });
      proc.url = `http://127.0.0.1:${listen}`;
      await up(proc, `${proc.url}/readyz`);
      return proc;
    },
    async startWorker(name) {
      const proc = await launch(name, 'worker', {
        WORKFLOW_BUNDLE_PATH: path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js'),
        STORAGE_DIR: path.join(o.dir, `${name}-scratch`),
      });
      await up(proc, `http://127.0.0.1:${proc.metricsPort}/healthz`);
      return proc;
    },
    async kill(proc, signal = 'SIGKILL') {
      const { child } = proc;
      if (!isRunning(proc)) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
    async restartPostgres() {
      await postgres.stop();
      postgres = await startLocalPostgres(pgOptions);
    },
    async stop() {
      await stopAll(20_000);
      await rm(postgres.dataDir, { recursive: true, force: true });
      await rm(o.dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(o.apis.map((name, i) => fleet.startApi(name, ports[i])));
    await Promise.all(o.workers.map((name) => fleet.startWorker(name)));
  } catch (error) {
    // A fleet that did not start leaves no process behind (its logs are kept for the message).
    await stopAll(5_000);
    throw error;
  }
  return fleet;
}
