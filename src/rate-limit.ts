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
  /** Takes `points` (1 by default: one request; an OTLP export takes one per span or record). */
  consume(key: string, points?: number): Promise<RateDecision>;
}

export interface RateLimitStore {
  /**
   * `lease`: take that many requests from the shared counter at a time and hand them out in this
   * process (for routes too busy for a database round trip per request). A replica may then admit
   * up to `lease` requests of a window that it never uses: the limit holds, a little early.
   * `windowSeconds`: the window's length when it is not a minute (then `pointsPerMinute` counts per that window).
   */
  limiter(name: string, pointsPerMinute: number, o?: { lease?: number; windowSeconds?: number }): RateLimiter | null;
  close(): Promise<void>;
}

interface Lease {
  granted: number;
  used: number;
  /** Requests the window had left when this lease was taken, this lease included. */
  remainingBefore: number;
  endsAt: number;
}

/** Hands out leases of `size` requests per key; one acquisition at a time per key. */
function leased(store: RateLimiterPostgres, pointsPerMinute: number, size: number): RateLimiter {
  const leases = new Map<string, Lease>();
  const acquiring = new Map<string, Promise<Lease>>();
  const acquire = async (key: string): Promise<Lease> => {
    const want = Math.min(size, pointsPerMinute);
    try {
      const res = await store.consume(key, want);
      return { granted: want, used: 0, remainingBefore: res.remainingPoints + want, endsAt: Date.now() + res.msBeforeNext };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      // The counter went past the limit with this lease: what was left before it is still ours.
      const left = Math.max(0, pointsPerMinute - (rejection.consumedPoints - want));
      return { granted: Math.min(left, want), used: 0, remainingBefore: left, endsAt: Date.now() + rejection.msBeforeNext };
    }
  };
  return {
    async consume(key, points = 1) {
      if (points !== 1) throw new Error('a leased limiter hands out one request at a time');
      for (;;) {
        const lease = leases.get(key);
        const now = Date.now();
        if (lease && now < lease.endsAt && lease.used < lease.granted) {
          lease.used += 1;
          return {
            allowed: true,
            limit: pointsPerMinute,
            remaining: Math.max(0, lease.remainingBefore - lease.used),
            resetSeconds: Math.max(1, Math.ceil((lease.endsAt - now) / 1000)),
          };
        }
        if (lease && now < lease.endsAt && lease.granted < Math.min(size, pointsPerMinute)) {
          // The window ran out while this lease was taken: refused until it resets.
          return {
            allowed: false,
            limit: pointsPerMinute,
            remaining: 0,
            resetSeconds: Math.max(1, Math.ceil((lease.endsAt - now) / 1000)),
          };
        }
        let pending = acquiring.get(key);
        if (!pending) {
          pending = acquire(key).finally(() => acquiring.delete(key));
          acquiring.set(key, pending);
          leases.set(key, await pending);
        } else {
          await pending;
        }
        if (leases.size > 10_000) for (const [k, l] of leases) if (l.endsAt < now) leases.delete(k);
      }
    },
  };
}

export function createRateLimitStore(databaseUrl: string): RateLimitStore {
  // rate-limiter-flexible speaks to a plain `pg` pool; a small one beside Slonik's.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => undefined); // idle-client errors surface on the next query instead
  return {
    limiter(name, pointsPerMinute, o = {}) {
      if (pointsPerMinute === 0) return null;
      const store = new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: name,
        points: pointsPerMinute,
        duration: o.windowSeconds ?? 60,
      });
      if (o.lease && o.lease > 1) return leased(store, pointsPerMinute, o.lease);
      return {
        async consume(key, points = 1) {
          try {
            const res = await store.consume(key, points);
            return {
              allowed: true,
              limit: pointsPerMinute,
              remaining: res.remainingPoints,
              resetSeconds: Math.ceil(res.msBeforeNext / 1000),
            };
          } catch (rejection) {
            // Over the limit the library rejects with a RateLimiterRes; a store failure is an Error.
            if (!(rejection instanceof RateLimiterRes)) throw rejection;
            return {
              allowed: false,
              limit: pointsPerMinute,
              remaining: 0,
              resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
            };
          }
        },
      };
    },
    close: () => pool.end(),
  };
}
