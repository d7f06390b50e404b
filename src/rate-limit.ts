import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Fixed-window request counters kept in PostgreSQL (rate-limiter-flexible's store, table
 * `rate_limits` from the migrations), so every API replica shares them.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimiter {
  consume(key: string): Promise<RateDecision>;
}

export interface RateLimitStore {
  limiter(name: string, pointsPerMinute: number): RateLimiter | null;
  close(): Promise<void>;
}

export function createRateLimitStore(databaseUrl: string): RateLimitStore {
  // rate-limiter-flexible speaks to a plain `pg` pool; a small one beside Slonik's.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined); // idle-client errors surface on the next query instead
  return {
    limiter(name, pointsPerMinute) {
      if (pointsPerMinute === 0) return null;
      const store = new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: name,
        points: pointsPerMinute,
        duration: 60,
      });
      return {
        async consume(key) {
          try {
            const res = await store.consume(key);
            return { allowed: true, limit: pointsPerMinute, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
          } catch (rejection) {
            // Over the limit the library rejects with a RateLimiterRes; a store failure is an Error.
            if (!(rejection instanceof RateLimiterRes)) throw rejection;
            return { allowed: false, limit: pointsPerMinute, remaining: 0, resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
          }
        },
      };
    },
    close: () => pool.end(),
  };
}
