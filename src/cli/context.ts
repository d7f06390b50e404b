import type { DatabasePool } from 'slonik';
import { TokenService } from '../auth/tokens.js';
import { signingSecretPayloadKeys, type Config } from '../config.js';
import type { PayloadKey } from '../temporal/codec.js';
import { createDatabasePool } from '../db/pool.js';
import { readStackInfo } from '../dev/stack-file.js';
import type { TemporalClient } from '../temporal/connection.js';
import type { TemporalGateway } from '../temporal/gateway.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Connections the commands need, opened on first use and closed once at the end. */
export class CliContext {
  private pool: DatabasePool | undefined;

  constructor(readonly config: Config) {}

  /** DATABASE_URL, or the running dev stack's database (`npm start` writes it under DATA_DIR). */
  async databaseUrl(): Promise<string> {
    if (this.config.database.url) return this.config.database.url;
    const stack = await readStackInfo(this.config.dataDir);
    if (stack) return stack.databaseUrl;
    throw new CliError('DATABASE_URL is not set and no dev stack is running here (start one with `npm start`).');
  }

  /** DATABASE_SESSION_URL when set (migrations never go through a transaction pooler), else databaseUrl(). */
  async sessionDatabaseUrl(): Promise<string> {
    return this.config.database.sessionUrl ?? this.databaseUrl();
  }

  async db(): Promise<DatabasePool> {
    this.pool ??= await createDatabasePool(await this.databaseUrl(), { ...this.config.database, poolSize: 2 });
    return this.pool;
  }

  /** The payload keys of the deployment (or of the dev stack running here). */
  async payloadKeys(): Promise<PayloadKey[] | undefined> {
    if (this.config.temporal.payloadKeys) return this.config.temporal.payloadKeys;
    const secret = (await readStackInfo(this.config.dataDir))?.signingSecret;
    return secret ? signingSecretPayloadKeys(secret) : undefined;
  }

  async tokens(): Promise<TokenService> {
    const secret = this.config.auth.signingSecret ?? (await readStackInfo(this.config.dataDir))?.signingSecret;
    if (!secret) throw new CliError('SIGNING_SECRET is not set and no dev stack is running here.');
    return new TokenService({ signingSecret: secret, issuer: this.config.auth.issuer });
  }

  /**
   * Runs `use` with a Temporal gateway (TEMPORAL_ADDRESS, or the dev stack's); `fallback` when
   * Temporal is unreachable (why) or not configured (null): the CLI's Temporal calls are best
   * effort, with a reconciler behind each.
   */
  async withTemporal<T>(use: (temporal: TemporalGateway) => Promise<T>, fallback: (why: string | null) => T | Promise<T>): Promise<T> {
    const address = this.config.temporal.address ?? (await readStackInfo(this.config.dataDir))?.temporalAddress;
    if (!address) return fallback(null);
    // Temporal's client is loaded only by the commands that call it: it is most of a command's start.
    const [{ connectTemporalClient }, { TemporalGateway }] = await Promise.all([
      import('../temporal/connection.js'),
      import('../temporal/gateway.js'),
    ]);
    let temporal: TemporalClient;
    try {
      temporal = await connectTemporalClient({ temporal: { ...this.config.temporal, address, payloadKeys: await this.payloadKeys() } });
    } catch (error) {
      return fallback((error as Error).message);
    }
    try {
      return await use(TemporalGateway.of(temporal));
    } finally {
      await temporal.connection.close();
    }
  }

  /**
   * After a top-up: wakes the organization's billing-blocked session workflows through Temporal
   * (TEMPORAL_ADDRESS, or the dev stack's). Best effort: unreachable, they re-check by themselves.
   */
  async resumeBlockedSessions(organizationId: string): Promise<number> {
    const unwoken = (why: string | null) => {
      if (why !== null)
        process.stderr.write(
          `note: billing-blocked sessions were not woken now (${why}); they resume within AGENT_BILLING_RECHECK_SECONDS\n`,
        );
      return 0;
    };
    return this.withTemporal(async (temporal) => {
      // Loaded only once Temporal is reached (it loads Temporal's client): a top-up without it starts fast.
      const { resumeBlockedSessions } = await import('../agents/session-workflow.js');
      return resumeBlockedSessions(this.pool!, temporal, this.config, organizationId).catch((error: Error) => unwoken(error.message));
    }, unwoken);
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}

/** What a command returns when it wrote its own output on stdout (a stream, such as an export), instead of one JSON object. */
export class OutputWritten {}
