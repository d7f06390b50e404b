import { Runtime } from '@temporalio/worker';
import { sdkLogger, sdkLogging } from '../temporal/sdk-logger.js';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, signingSecretPayloadKeys, type Config } from '../config.js';
import { startLocalPostgres, type LocalPostgres } from '../dev/postgres.js';
import { canListen, isPortOpen } from '../dev/net.js';
import { devSigningSecret, removeStackInfo, writeStackInfo } from '../dev/stack-file.js';
import { StartupError, startupFailureLine } from '../dev/startup-error.js';
import { findTemporalCli } from '../dev/temporal-cli.js';
import { startLocalTemporal, type LocalTemporal } from '../dev/temporal-server.js';
import { StartupGate } from '../health.js';
import { createLogger } from '../logger.js';
import { resolveFromRoot } from '../paths.js';
import { startApi } from './api.js';
import { startTracing, stopTracing } from '../telemetry/tracing.js';
import { startWorker } from './worker.js';

/**
 * `npm start`: the whole stack on one machine. Embedded PostgreSQL unless DATABASE_URL is set, the
 * Temporal dev server (with its Web UI) unless TEMPORAL_ADDRESS is set, then migrations, the worker
 * and the API. Data stays under DATA_DIR across restarts; Ctrl-C stops everything.
 */
const started = performance.now();
const config = loadOrExit();
const logger = createLogger(config.logLevel, 'intake');
const dataDir = resolveFromRoot(config.dataDir);
/** Where the embedded PostgreSQL keeps its data (under DEV_POSTGRES_SHARED_DIR when the postgres user cannot reach DATA_DIR). */
let postgresDataDir = '';
/**
 * What to stop on Ctrl-C, in reverse order of start. Temporal and PostgreSQL run in process groups of
 * their own, so a terminal's Ctrl-C reaches only this process: they keep serving while the worker
 * drains, and a clean stop prints no failures. A step that waits on a peer still gets `boundMs`, after
 * which the stack moves on (the process exits right after).
 */
const stops: { name: string; stop: () => Promise<void>; boundMs?: number }[] = [];
/** The worker drains in-flight tasks; with the Temporal server gone, its SDK would retry replies for longer. */
const WORKER_STOP_BOUND_MS = 3_000;

function loadOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(
      `${startupFailureLine(new StartupError((error as Error).message, 'correct the environment variables named (docs/configuration.md)'))}\n`,
    );
    process.exit(1);
  }
}

async function ensureFree(port: number, host: string, what: string, variable: string): Promise<void> {
  if (port === 0) return;
  if ((await isPortOpen(port, host === '0.0.0.0' ? '127.0.0.1' : host)) || !(await canListen(port, host))) {
    throw new StartupError(
      `port ${port} (${what}) is already in use`,
      `stop what listens there (another \`npm start\`?) or set ${variable} to a free port`,
    );
  }
}

async function database(): Promise<string> {
  if (config.database.url) return config.database.url;
  const pg: LocalPostgres = await startLocalPostgres({
    dataDir: path.join(dataDir, 'postgres'),
    port: config.database.devPort,
    persistent: true,
    sharedDir: config.database.devSharedDir,
    ownProcessGroup: true,
    onLog: (m) => logger.debug({ component: 'postgres' }, m.trim()),
  });
  stops.push({ name: 'postgres', stop: () => pg.stop() });
  postgresDataDir = pg.dataDir;
  await pg.createDatabase('intake');
  return pg.url('intake');
}

async function temporal(): Promise<{ address: string; uiUrl: string | null }> {
  if (config.temporal.address) return { address: config.temporal.address, uiUrl: null };
  const cliPath = await findTemporalCli(config.temporal.cliPath, (m) => logger.info(m), config.toolsDir);
  const server: LocalTemporal = await startLocalTemporal({
    cliPath,
    port: config.temporal.devPort,
    uiPort: config.temporal.devUiPort,
    namespace: config.temporal.namespace,
    dbFile: path.join(dataDir, 'temporal.db'),
    logFile: path.join(dataDir, 'temporal.log'),
    ownProcessGroup: true,
  });
  stops.push({ name: 'temporal', stop: () => server.stop() });
  return { address: server.address, uiUrl: server.uiUrl };
}

async function stopAll(): Promise<void> {
  for (const { name, stop, boundMs } of stops.reverse()) {
    try {
      const t = performance.now();
      const finished = await (boundMs === undefined
        ? stop().then(() => true)
        : Promise.race([stop().then(() => true), sleep(boundMs).then(() => false)]));
      const ms = Math.round(performance.now() - t);
      if (!finished) logger.warn({ name, ms }, 'not stopped within its bound: moving on');
      else if (ms > 2_000) logger.warn({ name, ms }, 'slow to stop');
      else logger.debug({ name, ms }, 'stopped');
    } catch (error) {
      logger.warn({ err: error, name }, 'error while stopping');
    }
  }
}

/** Every port the stack will listen on, checked before anything starts. */
async function checkPorts(): Promise<void> {
  await ensureFree(config.http.port, config.http.host, 'the API', 'PORT');
  if (!config.database.url) await ensureFree(config.database.devPort, '127.0.0.1', 'embedded PostgreSQL', 'DEV_POSTGRES_PORT');
  if (!config.temporal.address) {
    await ensureFree(config.temporal.devPort, '127.0.0.1', 'Temporal', 'TEMPORAL_PORT');
    await ensureFree(config.temporal.devUiPort, '127.0.0.1', 'Temporal UI', 'TEMPORAL_UI_PORT');
  }
}

async function main(): Promise<void> {
  await checkPorts();
  const [databaseUrl, t, signingSecret] = await Promise.all([
    database(),
    temporal(),
    config.auth.signingSecret ?? devSigningSecret(config.dataDir),
  ]);
  const effective: Config = {
    ...config,
    database: { ...config.database, url: databaseUrl, sessionUrl: config.database.sessionUrl ?? databaseUrl },
    temporal: {
      ...config.temporal,
      address: t.address,
      payloadKeys: config.temporal.payloadKeys ?? signingSecretPayloadKeys(signingSecret),
    },
    auth: { ...config.auth, signingSecret },
  };
  // This process handles Ctrl-C itself, so the SDK must not shut the worker down on its own.
  Runtime.install({
    shutdownSignals: [],
    logger: sdkLogger(logger.child({ component: 'temporal' })),
    telemetryOptions: { logging: sdkLogging(config.logLevel) },
  });
  // Stopped after the API and the worker: what they traced until they stopped is exported.
  if (startTracing(config, 'intake').enabled) stops.push({ name: 'tracing', stop: stopTracing });
  // Ready means usable: /readyz says `starting` until the worker runs and the CLI can find the stack.
  const startup = new StartupGate();
  const api = await startApi(effective, logger.child({ component: 'api' }), { startup });
  stops.push({ name: 'api', stop: () => api.close() });
  const worker = await startWorker(effective, logger.child({ component: 'worker' }));
  stops.push({ name: 'worker', stop: () => worker.shutdown(), boundMs: WORKER_STOP_BOUND_MS });
  await writeStackInfo(config.dataDir, {
    databaseUrl,
    temporalAddress: t.address,
    temporalUiUrl: t.uiUrl,
    apiUrl: api.url,
    signingSecret,
    pid: process.pid,
  });
  stops.push({ name: 'stack-file', stop: () => removeStackInfo(config.dataDir) });
  startup.markReady();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    [
      '',
      `  Intake is running (ready in ${seconds} s)`,
      `  API          ${api.url}   (GET /readyz, GET /openapi.json)`,
      `  Console      ${api.url}/console   (sign in with a user's e-mail and password)`,
      `  Temporal UI  ${t.uiUrl ?? `(external cluster at ${t.address})`}`,
      `  PostgreSQL   ${config.database.url ? '(DATABASE_URL)' : `embedded, port ${config.database.devPort}, data in ${displayPath(postgresDataDir)}`}`,
      '',
      '  Create an organization:  npm run -s intake -- org create --name Acme',
      '  Temporal CLI:            npm run -s temporal -- workflow list',
      '  Stop:                    Ctrl-C',
      '',
    ].join('\n') + '\n',
  );
}

// This process owns shutdown: the worker, the API, Temporal and PostgreSQL stop in reverse order.
let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  logger.info(`${signal}: stopping the stack`);
  stopAll().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

/** Relative to the working directory when inside it (`.data/postgres`), absolute otherwise. */
function displayPath(p: string): string {
  const relative = path.relative(process.cwd(), p);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : p;
}

let running = false;
// Nothing may end as an unhandled 'error' event with a stack trace: the same one line and exit 1.
process.on('uncaughtException', (error) => {
  logger.error({ err: error }, running ? 'unexpected error: stopping the stack' : 'the stack failed to start');
  if (stopping) return;
  stopping = true;
  const line = running ? startupFailureLine(error).replace(/^Intake failed to start: /, 'Intake stopped: ') : startupFailureLine(error);
  void stopAll().finally(() => {
    process.stderr.write(`${line}\n`);
    process.exit(1);
  });
});

main()
  .then(() => (running = true))
  .catch(async (error: unknown) => {
    // A failure the user can act on is one line; anything else also goes to the log with its stack.
    if (!(error instanceof StartupError)) logger.error({ err: error }, 'the stack failed to start');
    await stopAll();
    process.stderr.write(`${startupFailureLine(error)}\n`);
    process.exit(1);
  });
