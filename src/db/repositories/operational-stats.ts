import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The service's backlog as the worker's gauges show it, each count served by a partial index:
 * sessions waiting for processing and the age of the oldest wake (the processing lag), analyses
 * queued, sessions held for credits, active media ingestions by phase (and how long the stillest
 * has not moved), meeting bots by state.
 */
export interface OperationalStats {
  sessionsWaiting: number;
  oldestWakeAgeSeconds: number;
  analysesQueued: number;
  sessionsBillingBlocked: number;
  mediaByPhase: Record<string, number>;
  /** By phase: the longest an active ingestion has gone without progress or a phase change. */
  mediaIdleSecondsByPhase: Record<string, number>;
  botsByState: Record<string, number>;
}

const counts = z.object({ key: z.string(), n: z.number() });

export async function operationalStats(db: CommonQueryMethods): Promise<OperationalStats> {
  const wakes = await db.one(sql.type(z.object({ n: z.number(), age: z.number() }))`
    SELECT count(*)::int AS n, coalesce(extract(epoch FROM now() - min(wake_requested_at)), 0)::float8 AS age
    FROM agent_sessions WHERE wake_requested_at <= now()`);
  const analysesQueued = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM agent_analysis_jobs WHERE status = 'queued'`);
  const blocked = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM agent_sessions WHERE processing_status = 'billing_blocked'`);
  const media = await db.any(sql.type(counts.extend({ idle: z.number() }))`
    SELECT phase AS key, count(*)::int AS n, coalesce(extract(epoch FROM now() - min(updated_at)), 0)::float8 AS idle FROM media_ingestions
    WHERE phase NOT IN ('ready', 'failed', 'cancelled') GROUP BY phase`);
  const bots = await db.any(sql.type(counts)`
    SELECT bot_state AS key, count(*)::int AS n FROM meeting_joins
    WHERE bot_state NOT IN ('done', 'failed') GROUP BY bot_state`);
  return {
    sessionsWaiting: wakes.n,
    oldestWakeAgeSeconds: Math.max(0, wakes.age),
    analysesQueued,
    sessionsBillingBlocked: blocked,
    mediaByPhase: Object.fromEntries(media.map((r) => [r.key, r.n])),
    mediaIdleSecondsByPhase: Object.fromEntries(media.map((r) => [r.key, Math.max(0, r.idle)])),
    botsByState: Object.fromEntries(bots.map((r) => [r.key, r.n])),
  };
}

/** The readiness probe's query: the database answers a statement. */
export async function ping(db: CommonQueryMethods): Promise<void> {
  await db.oneFirst(sql.unsafe`SELECT 1`);
}
