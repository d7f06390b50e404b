import { activityInfo } from '@temporalio/activity';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { DatabaseCheck } from '../workflows/diagnostics/contract.js';

export function createDiagnosticsActivities(deps: { pool: DatabasePool }) {
  return {
    async checkDatabase(): Promise<DatabaseCheck> {
      const row = await deps.pool.one(sql.type(
        z.object({ server_version: z.string(), applied: z.number(), latest: z.string().nullable() }),
      )`
        SELECT current_setting('server_version') AS server_version,
               (SELECT count(*)::int FROM schema_migrations) AS applied,
               (SELECT name FROM schema_migrations ORDER BY version DESC LIMIT 1) AS latest`);
      return { serverVersion: row.server_version, migrationsApplied: row.applied, latestMigration: row.latest };
    },
    async describeWorker(): Promise<{ identity: string; taskQueue: string }> {
      const info = activityInfo();
      return { identity: `pid-${process.pid}`, taskQueue: info.taskQueue };
    },
  };
}

export type DiagnosticsActivities = ReturnType<typeof createDiagnosticsActivities>;
