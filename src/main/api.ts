import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import { prepareEventPartitions } from '../agents/event-partitions.js';
import { buildApp } from '../../api/app.js';
import type { AppDeps } from '../../api/context.js';
import { createBodyChecker } from '../../api/json-body.js';
import { AggregatorRegistry } from 'prom-client';
import { createApiMetrics, type ApiMetrics } from '../metrics/api-metrics.js';
import { startOpsServer, type OpsServer } from '../metrics/server.js';
import { TokenService } from '../auth/tokens.js';
import { loadConfig, required, type Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createDatabasePool } from '../db/pool.js';
import { warnOfUnboundedPooler } from '../db/pooler.js';
import { createLogger, type Logger } from '../logger.js';
import { createRateLimitStore } from '../rate-limit.js';
import { PostgresUploadLocker } from '../media/upload-locker.js';
import { connectTemporalClient } from '../temporal/connection.js';
import { TemporalGateway } from '../temporal/gateway.js';
import { retryStartup } from './retry.js';
import { createOAuthServers } from '../oauth/server.js';
import { renderOAuthError } from '../../api/oauth/pages.js';
import { startTracing, stopTracing } from '../telemetry/tracing.js';
import type { StartupGate } from '../health.js';
import { isEntryPoint } from '../entry-point.js';

export interface RunningApi {
  url: string;
  metrics: ApiMetrics;
  close(): Promise<void>;
}

/** Applies migrations (unless a supervising process did), connects PostgreSQL and Temporal, and listens. */
export async function startApi(
  config: Config,
  logger: Logger,
  o: { migrate?: boolean; beforeListen?: (metrics: ApiMetrics) => void; startup?: StartupGate } = {},
): Promise<RunningApi> {
  const databaseUrl = required(config.database.url, 'DATABASE_URL');
  // Migrations, LISTEN and session advisory locks: never through a transaction pooler.
  const sessionUrl = required(config.database.sessionUrl, 'DATABASE_SESSION_URL');
  // Behind a load balancer the Host header is the client's to choose: links must not be built from it.
  if (config.env === 'production') required(config.http.publicBaseUrl, 'PUBLIC_BASE_URL (with NODE_ENV=production)');
  const signingSecret = required(config.auth.signingSecret, 'SIGNING_SECRET');
  const tokens = new TokenService({ signingSecret, issuer: config.auth.issuer });
  if (o.migrate ?? true) await applyMigrations(sessionUrl, logger);
  const pool = await createDatabasePool(databaseUrl, config.database);
  await warnOfUnboundedPooler(pool, config.database, logger);
  if (o.migrate ?? true) await prepareEventPartitions(pool, logger);
  const temporal = await retryStartup('Temporal', logger, () => connectTemporalClient(config));
  const rateLimits = createRateLimitStore(databaseUrl);
  const uploadLocks = new PostgresUploadLocker(sessionUrl);
  const bodyChecker = createBodyChecker({ threads: config.http.bodyWorkerThreads });
  const metrics = createApiMetrics({ pool });
  o.beforeListen?.(metrics);
  const oauth = await createOAuthServers({
    issuer: config.http.publicBaseUrl,
    pool,
    signingSecret,
    rateLimits,
    trustProxy: config.http.trustProxy,
    trustProxyHops: config.http.trustProxyHops,
    renderError: renderOAuthError,
    oidc: config.signIn.oidc,
    limits: config.rateLimits,
  });
  const deps: AppDeps = {
    config,
    pool,
    temporal: TemporalGateway.of(temporal),
    tokens,
    logger,
    rateLimits,
    uploadLocks,
    bodyChecker,
    metrics,
    oauth,
    startup: o.startup,
  };
  const app = buildApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.http.port, config.http.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  return {
    url: localUrl(config, port),
    metrics,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await pool.end();
      await rateLimits.close();
      await uploadLocks.close();
      await bodyChecker?.close();
      await temporal.connection.close();
    },
  };
}

/** Where this host reaches the API (all interfaces: loopback). */
function localUrl(config: Config, port: number): string {
  return `http://${config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host}:${port}`;
}

async function applyMigrations(databaseUrl: string, logger: Logger): Promise<void> {
  const migrations = await retryStartup('PostgreSQL', logger, () => migrate(databaseUrl));
  if (migrations.applied.length) logger.info({ applied: migrations.applied }, 'migrations applied');
}

/** One API process: listens until SIGTERM or SIGINT, then closes its connections and exits 0. */
async function serve(config: Config, logger: Logger, o: { migrate: boolean }): Promise<void> {
  startTracing(config, 'intake-api');
  // A supervised process hands its metrics to the supervisor, which serves them all added up.
  // Constructing an AggregatorRegistry is what makes this process answer the supervisor's requests
  // (prom-client): done before it listens, so that it answers with its own from the first scrape on.
  const supervised = cluster.isWorker;
  const api = await startApi(config, logger, {
    ...o,
    beforeListen: (metrics) => {
      if (!supervised) return;
      AggregatorRegistry.setRegistries([metrics.registry]);
      new AggregatorRegistry();
    },
  });
  logger.info({ url: api.url }, 'API listening');
  const ops = supervised
    ? null
    : await metricsEndpoint(config, logger, async () => ({
        contentType: api.metrics.registry.contentType,
        body: await api.metrics.registry.metrics(),
      }));
  let stopping = false;
  // Ctrl-C reaches a supervised process and its supervisor's SIGTERM too: the second signal is not a second stop.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down the API');
    Promise.all([api.close(), ops?.close()])
      .then(stopTracing)
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** METRICS_PORT's `/metrics` (none when it is `off`). */
async function metricsEndpoint(
  config: Config,
  logger: Logger,
  scrape: () => Promise<{ contentType: string; body: string }>,
): Promise<OpsServer | null> {
  if (config.metrics.port === null) return null;
  return startOpsServer({
    host: config.metrics.host,
    port: config.metrics.port,
    logger,
    routes: { '/metrics': async () => ({ status: 200, ...(await scrape()) }) },
  });
}

/** How long a supervised API process gets to stop before it is killed. */
const PROCESS_STOP_MS = 20_000;

/**
 * API_PROCESSES > 1: this process applies the migrations, then runs that many API processes on the
 * same port (node:cluster; connections are handed out round-robin) and replaces one that dies
 * after it was listening. One that dies before (bad configuration) stops the whole API. SIGTERM
 * or SIGINT stops them all, then this process (exit 0).
 */
async function supervise(config: Config, logger: Logger): Promise<void> {
  required(config.database.url, 'DATABASE_URL');
  required(config.auth.signingSecret, 'SIGNING_SECRET');
  await applyMigrations(required(config.database.sessionUrl, 'DATABASE_SESSION_URL'), logger);
  let stopping = false;
  const listening = new Set<Worker>();
  const fork = () => cluster.fork();
  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    if (listening.size === config.http.processes) {
      logger.info({ url: localUrl(config, address.port), processes: config.http.processes }, 'API listening');
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!listening.delete(worker)) {
      logger.error({ pid: worker.process.pid, code, signal }, 'an API process exited before it was listening; stopping the API');
      void stopAll(1);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'an API process exited; starting another');
    fork();
  });
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down the API processes');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => w.process.kill('SIGKILL'), PROCESS_STOP_MS);
            w.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            w.process.kill('SIGTERM');
          }),
      ),
    );
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  for (let i = 0; i < config.http.processes; i++) fork();
  const aggregator = new AggregatorRegistry();
  await metricsEndpoint(config, logger, async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }));
}

if (isEntryPoint(import.meta.url)) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'intake-api');
  if (cluster.isPrimary && config.http.processes > 1) await supervise(config, logger);
  else await serve(config, logger, { migrate: cluster.isPrimary });
}
