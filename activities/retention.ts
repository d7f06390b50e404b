import type { DatabasePool } from 'slonik';
import { DOMAIN_EVENT_RETENTION_DAYS_DEFAULT } from '../src/config.js';
import { deleteExpiredSessions } from '../src/db/repositories/agent-sessions.js';
import { purgeEventsBefore } from '../src/db/repositories/domain-events.js';
import { purgeExpiredModels } from '../src/db/repositories/oauth-models.js';

export function createRetentionActivities(deps: { pool: DatabasePool; eventRetentionDays?: number | undefined }) {
  return {
    /** One batch of the retention sweep; returns how many conversations it deleted. */
    async deleteExpiredConversations(limit: number): Promise<number> {
      return deleteExpiredSessions(deps.pool, limit);
    },
    /** One batch of the authorization server's expired rows (oauth_models); returns how many it deleted. */
    async purgeExpiredAuthorizations(limit: number): Promise<number> {
      return purgeExpiredModels(deps.pool, limit);
    },
    /** One batch of domain events older than DOMAIN_EVENT_RETENTION_DAYS; returns how many it deleted. */
    async purgeExpiredEvents(limit: number): Promise<number> {
      return purgeEventsBefore(deps.pool, eventRetentionCutoff(deps.eventRetentionDays ?? DOMAIN_EVENT_RETENTION_DAYS_DEFAULT), limit);
    },
  };
}

/** Events recorded before this are past their retention. */
export function eventRetentionCutoff(retentionDays: number, now = Date.now()): Date {
  return new Date(now - retentionDays * 24 * 3600 * 1000);
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
