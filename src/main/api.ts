import type { Server } from 'node:http';
import { buildApp } from '../../api/app.js';
import type { AppDeps } from '../../api/context.js';
import { TokenService } from '../auth/tokens.js';
import { loadConfig, required, type Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createDatabasePool } from '../db/pool.js';
import { createLogger, type Logger } from '../logger.js';
import { createRateLimitStore } from '../rate-limit.js';
import { connectTemporalClient } from '../temporal/connection.js';
import { retryStartup } from './retry.js';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Applies migrations, connects PostgreSQL and Temporal, and listens. */
export async function startApi(config: Config, logger: Logger): Promise<RunningApi> {
  const databaseUrl = required(config.database.url, 'DATABASE_URL');
  const tokens = new TokenService({ signingSecret: required(config.auth.signingSecret, 'SIGNING_SECRET'), issuer: config.auth.issuer });
  const migrations = await retryStartup('PostgreSQL', logger, () => migrate(databaseUrl));
  if (migrations.applied.length) logger.info({ applied: migrations.applied }, 'migrations applied');
  const pool = await createDatabasePool(databaseUrl, config.database);
  const temporal = await retryStartup('Temporal', logger, () => connectTemporalClient(config));
  const rateLimits = createRateLimitStore(databaseUrl);
  const deps: AppDeps = { config, pool, temporal, tokens, logger, rateLimits };
  const app = buildApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.http.port, config.http.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  const host = config.http.host === '0.0.0.0' ? '127.0.0.1' : config.http.host;
  return {
    url: `http://${host}:${port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await pool.end();
      await rateLimits.close();
      await temporal.connection.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'intake-api');
  const api = await startApi(config, logger);
  logger.info({ url: api.url }, 'API listening');
  const stop = () => {
    logger.info('shutting down the API');
    api.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
