import type { DatabasePool } from 'slonik';
import { deleteExpiredSessions } from '../src/db/repositories/agent-retention.js';

export function createRetentionActivities(deps: { pool: DatabasePool }) {
  return {
    /** One batch of the retention sweep; returns how many conversations it deleted. */
    async deleteExpiredConversations(limit: number): Promise<number> {
      return deleteExpiredSessions(deps.pool, limit);
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
