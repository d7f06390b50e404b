import type Koa from 'koa';
import type { DatabasePool } from 'slonik';
import type { Principal } from '../src/auth/principal.js';
import type { CredentialLookup } from '../src/db/repositories/agent-applications.js';
import type { TokenService } from '../src/auth/tokens.js';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import type { UploadLocker } from '../src/media/upload-locker.js';
import type { RateLimitStore } from '../src/rate-limit.js';
import type { BodyChecker } from './json-body.js';
import type { ApiMetrics } from '../src/metrics/api-metrics.js';
import type { OAuthAccess, OAuthServers } from '../src/oauth/server.js';
import type { StartupGate } from '../src/health.js';
import type { TemporalGateway } from '../src/temporal/gateway.js';

/** Everything the API needs, injected: tests pass their own pool, Temporal gateway and config. */
export interface AppDeps {
  config: Config;
  pool: DatabasePool;
  /** The one door to Temporal: the API calls workflows only through their gateways over it. */
  temporal: TemporalGateway;
  tokens: TokenService;
  logger: Logger;
  rateLimits: RateLimitStore;
  /** The tus endpoint's locks, shared by every replica (PostgreSQL advisory locks). */
  uploadLocks: UploadLocker;
  /** Threads that parse and validate large bodies off the event loop; null: none (all on the loop). */
  bodyChecker: BodyChecker | null;
  /** This process's Prometheus metrics. */
  metrics: ApiMetrics;
  /** The MCP authorization server (OAuth 2.1 for MCP clients); absent: /mcp takes no token (the CLI's only with MCP_ACCEPT_CLI_TOKENS). */
  oauth?: OAuthServers;
  /** Closed while the owning process still starts (`/readyz` answers 503 `starting`); absent: ready once listening. */
  startup?: StartupGate;
}

export interface AppState {
  requestId: string;
  principal?: Principal;
  /** The agent ingest credential and its application (agent ingest only). */
  agent?: CredentialLookup;
  /** The hash of that request's ingest secret (agent ingest only). */
  agentSecretHash?: Buffer;
  /** OTLP routes: the request's encoding, which their answers use too. */
  otlpEncoding?: 'protobuf' | 'json';
  /** The body was parsed and validated by a body-checking thread. */
  bodyChecked?: boolean;
  /** /mcp with an OAuth access token: what its user approved for the client. */
  oauth?: OAuthAccess;
  log: Logger;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
