import type { DatabasePool } from 'slonik';
import { deleteExpiredSessions } from '../src/db/repositories/agent-sessions.js';
import { purgeExpiredModels } from '../src/db/repositories/oauth-models.js';

export function createRetentionActivities(deps: { pool: DatabasePool }) {
  return {
    /** One batch of the retention sweep; returns how many conversations it deleted. */
    async deleteExpiredConversations(limit: number): Promise<number> {
      return deleteExpiredSessions(deps.pool, limit);
    },
    /** One batch of the authorization server's expired rows (oauth_models); returns how many it deleted. */
    async purgeExpiredAuthorizations(limit: number): Promise<number> {
      return purgeExpiredModels(deps.pool, limit);
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
