import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/** The server's version and the migrations applied, in one round trip (`intake doctor` reads it through a worker). */
export async function schemaStatus(
  db: CommonQueryMethods,
): Promise<{ serverVersion: string; migrationsApplied: number; latestMigration: string | null }> {
  const row = await db.one(sql.type(z.object({ server_version: z.string(), applied: z.number(), latest: z.string().nullable() }))`
    SELECT current_setting('server_version') AS server_version,
           (SELECT count(*)::int FROM schema_migrations) AS applied,
           (SELECT name FROM schema_migrations ORDER BY version DESC LIMIT 1) AS latest`);
  return { serverVersion: row.server_version, migrationsApplied: row.applied, latestMigration: row.latest };
}

/**
 * The timeouts the session serving this query runs with (behind a transaction pooler, what the
 * pooler's `connect_query` set): the names of those that are off (`0`), empty when both bound.
 */
export async function unboundedTimeouts(db: CommonQueryMethods): Promise<string[]> {
  const row = await db.one(sql.type(z.object({ statement: z.string(), idle: z.string() }))`
    SELECT current_setting('statement_timeout') AS statement,
           current_setting('idle_in_transaction_session_timeout') AS idle`);
  return [...(row.statement === '0' ? ['statement_timeout'] : []), ...(row.idle === '0' ? ['idle_in_transaction_session_timeout'] : [])];
}
