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
