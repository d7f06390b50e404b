import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * Deletes up to `limit` conversations whose last activity is older than their application's
 * retention (spec: reducing retention can permanently delete older conversations). Events,
 * participants, revisions, analyses and signals go with them; metered usage stays (billing history).
 * SKIP LOCKED: a session being ingested right now is left for the next sweep.
 */
export async function deleteExpiredSessions(db: CommonQueryMethods, limit: number, organizationId?: string): Promise<number> {
  const org = organizationId ? sql.fragment`AND s.organization_id = ${organizationId}` : sql.fragment``;
  const deleted = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    WITH doomed AS (
      SELECT s.id FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
      WHERE a.retention_days IS NOT NULL AND s.last_ingest_at < now() - make_interval(days => a.retention_days) ${org}
      ORDER BY s.last_ingest_at LIMIT ${limit}
      FOR UPDATE OF s SKIP LOCKED)
    DELETE FROM agent_sessions WHERE id IN (SELECT id FROM doomed) RETURNING id`);
  return deleted.length;
}
