import type { DatabasePool } from 'slonik';
import { DOMAIN_EVENT_RETENTION_DAYS_DEFAULT } from '../src/config.js';
import { dropExpiredEventPartitions, sweepDoomedSessions } from '../src/agents/session-deletion.js';
import { extendEventPartitions } from '../src/agents/event-partitions.js';
import type { EventPartitionsOutcome } from '../workflows/retention-sweep/contract.js';
import { purgeEventsBefore } from '../src/db/repositories/domain-events.js';
import { purgeExpiredKeys } from '../src/db/repositories/idempotency-keys.js';
import { purgeExpiredModels } from '../src/db/repositories/oauth-models.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from '../src/idempotency/service.js';

export function createRetentionActivities(deps: { pool: DatabasePool; eventRetentionDays?: number | undefined }) {
  return {
    /**
     * The weekly partitions of agent_events (decision 0216): the weeks ahead attached, then the weeks
     * whose every session is past retention dropped with their sessions.
     */
    async maintainEventPartitions(): Promise<EventPartitionsOutcome> {
      return maintainEventPartitions(deps.pool);
    },
    /** One batch of the retention sweep (past retention, or of an application deleted with them); returns how many conversations it deleted. */
    async deleteExpiredConversations(limit: number): Promise<number> {
      return sweepDoomedSessions(deps.pool, limit);
    },
    /** One batch of the authorization server's expired rows (oauth_models); returns how many it deleted. */
    async purgeExpiredAuthorizations(limit: number): Promise<number> {
      return purgeExpiredModels(deps.pool, limit);
    },
    /** One batch of domain events older than DOMAIN_EVENT_RETENTION_DAYS; returns how many it deleted. */
    async purgeExpiredEvents(limit: number): Promise<number> {
      return purgeEventsBefore(deps.pool, eventRetentionCutoff(deps.eventRetentionDays ?? DOMAIN_EVENT_RETENTION_DAYS_DEFAULT), limit);
    },
    /** One batch of idempotency keys older than their 24 hours; returns how many it deleted. */
    async purgeExpiredIdempotencyKeys(limit: number): Promise<number> {
      return purgeExpiredKeys(deps.pool, IDEMPOTENCY_RETENTION_SECONDS, limit);
    },
  };
}

/** The sweep's partition work, for the activity and `intake retention sweep`. */
export async function maintainEventPartitions(pool: DatabasePool): Promise<EventPartitionsOutcome> {
  const extended = await extendEventPartitions(pool);
  const drops = await dropExpiredEventPartitions(pool);
  return {
    attached: extended.attached.length,
    dropped: drops.dropped.length,
    deletedSessions: drops.deletedSessions,
    busy: drops.busy.length,
  };
}

/** Events recorded before this are past their retention. */
export function eventRetentionCutoff(retentionDays: number, now = Date.now()): Date {
  return new Date(now - retentionDays * 24 * 3600 * 1000);
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
