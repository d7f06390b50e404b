import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { DatabasePool } from 'slonik';
import { buildApp, type AppDeps } from '../api/app.js';
import { createBodyChecker, type BodyChecker } from '../api/json-body.js';
import { createApiMetrics } from '../src/metrics/api-metrics.js';
import { TokenService } from '../src/auth/tokens.js';
import type { Config } from '../src/config.js';
import { REDACTED_PATHS, type Logger } from '../src/logger.js';
import { createRateLimitStore, type RateLimitStore } from '../src/rate-limit.js';
import { memoryUploadLocker, PostgresUploadLocker, type UploadLocker } from '../src/media/upload-locker.js';
import { connectTemporalClient, type TemporalClient } from '../src/temporal/connection.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import { createOAuthServers } from '../src/oauth/server.js';
import { renderOAuthError } from '../api/oauth/pages.js';
import { testConfig, TEST_SIGNING_SECRET } from './config.js';
import { testStack } from './stack.js';

export interface TestApi {
  url: string;
  deps: AppDeps;
  /** The Temporal client behind the app's gateway: tests read workflows with it. */
  temporal: TemporalClient;
  /** Every log line the app wrote, for assertions that credentials never reach the logs. */
  logs: string[];
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

export function testTokens(): TokenService {
  return new TokenService({ signingSecret: TEST_SIGNING_SECRET, issuer: 'intake' });
}

/**
 * The real app on a real port, with a real pool and Temporal client (either may be overridden).
 * Rate limits are counted in `databaseUrl` when it is given, and off otherwise.
 */
export async function startTestApi(options: {
  pool: DatabasePool;
  databaseUrl?: string;
  config?: Config;
  temporal?: TemporalClient;
  /** Replaces the in-memory test logger (benchmarks log like production). */
  logger?: Logger;
  /** Replaces the body-checking threads made from the config (a test counts their work). */
  bodyChecker?: BodyChecker | null;
  /** Shortens the authorization server's access tokens (an expiry test). */
  oauthAccessTokenSeconds?: number;
}): Promise<TestApi> {
  const config = options.config ?? testConfig();
  const temporal =
    options.temporal ?? (await connectTemporalClient({ temporal: { ...config.temporal, address: (await testStack()).temporal.address } }));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = options.logger ?? pino({ level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  const rateLimits: RateLimitStore = options.databaseUrl
    ? createRateLimitStore(options.databaseUrl)
    : { limiter: () => null, close: async () => undefined };
  // With a database URL, the replicas' shared tus locks; else one process's.
  const uploadLocks: UploadLocker = options.databaseUrl ? new PostgresUploadLocker(options.databaseUrl) : memoryUploadLocker();
  // As in production: large bodies are checked by a thread.
  const bodyChecker =
    options.bodyChecker !== undefined ? options.bodyChecker : createBodyChecker({ threads: config.http.bodyWorkerThreads });
  // Listening first: the port is part of the URL the tests reach the API at.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const oauth = await createOAuthServers({
    issuer: config.http.publicBaseUrl,
    pool: options.pool,
    signingSecret: TEST_SIGNING_SECRET,
    rateLimits,
    trustProxy: config.http.trustProxy,
    trustProxyHops: config.http.trustProxyHops,
    renderError: renderOAuthError,
    oidc: config.signIn.oidc,
    limits: config.rateLimits,
    accessTokenSeconds: options.oauthAccessTokenSeconds,
  });
  const deps: AppDeps = {
    config,
    pool: options.pool,
    temporal: TemporalGateway.of(temporal),
    tokens: testTokens(),
    logger,
    rateLimits,
    uploadLocks,
    bodyChecker,
    metrics: createApiMetrics({ pool: options.pool, processMetrics: false }),
    oauth,
  };
  server.on('request', buildApp(deps).callback());
  return {
    url,
    deps,
    temporal,
    logs,
    async request(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      const response = await fetch(`${url}${path}`, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, headers: response.headers, body };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (!options.temporal) await temporal.connection.close();
      await rateLimits.close();
      await uploadLocks.close();
      await bodyChecker?.close();
    },
  };
}
