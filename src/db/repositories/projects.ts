import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';

export const projectRow = z.object({
  id: z.string(),
  public_id: z.string(),
  organization_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
  associated_session_count: z.number(),
});
export type ProjectRow = z.infer<typeof projectRow>;

const projectColumns = sql.fragment`p.id, p.public_id, p.organization_id, p.name, p.description, p.created_at,
  (SELECT count(*)::int FROM project_sessions ps WHERE ps.project_id = p.id) AS associated_session_count`;

export async function insertProject(
  db: CommonQueryMethods,
  input: { organizationId: string; name: string; description: string | null; userId: string },
): Promise<ProjectRow> {
  return db.one(sql.type(projectRow)`
    WITH p AS (
      INSERT INTO projects (organization_id, name, description, created_by_user_id)
      VALUES (${input.organizationId}, ${input.name}, ${input.description}, ${input.userId}) RETURNING *)
    SELECT p.id, p.public_id, p.organization_id, p.name, p.description, p.created_at, 0 AS associated_session_count FROM p`);
}

/** By public id within the organization; another organization's project reads as unknown. */
export async function findProject(db: CommonQueryMethods, organizationId: string, publicId: string): Promise<ProjectRow | null> {
  if (!isUuid(publicId)) return null;
  return db.maybeOne(sql.type(projectRow)`
    SELECT ${projectColumns} FROM projects p WHERE p.public_id = ${publicId} AND p.organization_id = ${organizationId}`);
}

export const sessionSummaryRow = z.object({
  id: z.string(),
  title: z.string().nullable(),
  format: z.enum(['normalized', 'claude-code', 'codex']),
  event_count: z.number(),
  created: z.boolean(),
});

/** Idempotent for the same file in the organization: a second upload returns the first session. */
export async function upsertCodingSession(
  db: CommonQueryMethods,
  input: { organizationId: string; userId: string; title: string | null; format: string; contentHash: Buffer; events: unknown[] },
) {
  return db.one(sql.type(sessionSummaryRow)`
    INSERT INTO coding_sessions AS s (organization_id, uploaded_by_user_id, title, format, event_count, content_hash, events)
    VALUES (${input.organizationId}, ${input.userId}, ${input.title}, ${input.format}, ${input.events.length},
      ${sql.binary(input.contentHash)}, ${sql.jsonb(input.events as never)})
    ON CONFLICT (organization_id, content_hash) DO UPDATE SET title = coalesce(s.title, EXCLUDED.title)
    RETURNING s.id, s.title, s.format, s.event_count, (xmax = 0) AS created`);
}

export async function codingSessionExists(db: CommonQueryMethods, organizationId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  return db.exists(sql.unsafe`SELECT 1 FROM coding_sessions WHERE id = ${id} AND organization_id = ${organizationId}`);
}

/** Associates once; a repeat keeps the first association time. */
export async function associate(db: CommonQueryMethods, projectId: string, sessionId: string, userId: string): Promise<string> {
  await db.query(sql.unsafe`
    INSERT INTO project_sessions (project_id, session_id, associated_by_user_id) VALUES (${projectId}, ${sessionId}, ${userId})
    ON CONFLICT (project_id, session_id) DO NOTHING`);
  return db.oneFirst(sql.type(z.object({ associated_at: z.string() }))`
    SELECT associated_at FROM project_sessions WHERE project_id = ${projectId} AND session_id = ${sessionId}`);
}

export const associatedRow = z.object({
  session_id: z.string(),
  title: z.string().nullable(),
  format: z.string(),
  event_count: z.number(),
  associated_at: z.string(),
});

/** Oldest association first; keyset pages after `(associated_at, session id)` of the previous page's last row. */
export async function associatedSessions(
  db: CommonQueryMethods,
  projectId: string,
  page: { after: { at: string; id: string } | null; limit: number },
) {
  const after = page.after
    ? sql.fragment`AND (ps.associated_at, s.id) > (${page.after.at}::timestamptz, ${page.after.id}::uuid)`
    : sql.fragment``;
  return db.any(sql.type(associatedRow)`
    SELECT s.id AS session_id, s.title, s.format, s.event_count, ps.associated_at
    FROM project_sessions ps JOIN coding_sessions s ON s.id = ps.session_id
    WHERE ps.project_id = ${projectId} ${after}
    ORDER BY ps.associated_at, s.id LIMIT ${page.limit}`);
}
