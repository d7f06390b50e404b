import type { DatabasePool } from 'slonik';
import { DOMAIN_EVENT_RETENTION_DAYS_DEFAULT } from '../src/config.js';
import { sweepDoomedSessions } from '../src/agents/session-deletion.js';
import { purgeEventsBefore } from '../src/db/repositories/domain-events.js';
import { purgeExpiredKeys } from '../src/db/repositories/idempotency-keys.js';
import { purgeExpiredModels } from '../src/db/repositories/oauth-models.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from '../src/idempotency/service.js';

export function createRetentionActivities(deps: { pool: DatabasePool; eventRetentionDays?: number | undefined }) {
  return {
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

/** Events recorded before this are past their retention. */
export function eventRetentionCutoff(retentionDays: number, now = Date.now()): Date {
  return new Date(now - retentionDays * 24 * 3600 * 1000);
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
