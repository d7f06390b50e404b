import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tx } from '../pool.js';
import type { StoredTelemetryEvent } from '../../domain/coding-sessions/append.js';

/** Coding-agent sessions sent as telemetry (migration 0033): one row per external id in the organization, appended to. */

export const TELEMETRY_FORMAT = 'claude-code-telemetry';

const lockedRow = z.object({
  id: z.string(),
  title: z.string().nullable(),
  events: z.array(z.record(z.string(), z.unknown())),
});

/**
 * The session the external id names, created empty when it is new, locked until the transaction
 * ends: the exports of one session are appended one after the other.
 */
export async function lockTelemetrySession(
  tx: Tx,
  input: { organizationId: string; applicationId: string; externalId: string },
): Promise<{ id: string; title: string | null; events: StoredTelemetryEvent[]; created: boolean }> {
  const inserted = await tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO coding_sessions (organization_id, agent_application_id, source, external_id, format, event_count, events)
    VALUES (${input.organizationId}, ${input.applicationId}, 'telemetry', ${input.externalId}, ${TELEMETRY_FORMAT}, 0, '[]'::jsonb)
    ON CONFLICT (organization_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
    RETURNING id`);
  const row = await tx.one(sql.type(lockedRow)`
    SELECT id, title, events FROM coding_sessions
    WHERE organization_id = ${input.organizationId} AND external_id = ${input.externalId}
    FOR UPDATE`);
  return { ...row, events: row.events as unknown as StoredTelemetryEvent[], created: inserted !== null };
}

export async function saveTelemetrySession(
  tx: Tx,
  id: string,
  update: { events: readonly StoredTelemetryEvent[]; title: string | null; agentVersion: string | null },
): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE coding_sessions SET events = ${sql.jsonb(update.events as never)}, event_count = ${update.events.length},
      title = coalesce(title, ${update.title}), agent_version = coalesce(${update.agentVersion}, agent_version), updated_at = now()
    WHERE id = ${id}`);
}

export const codingSessionListRow = z.object({
  id: z.string(),
  source: z.enum(['upload', 'telemetry']),
  external_id: z.string().nullable(),
  title: z.string().nullable(),
  format: z.string(),
  event_count: z.number(),
  agent_version: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** The exact creation time (microseconds), for the next page's cursor. */
  position: z.string(),
});

/** The organization's coding sessions, newest first; keyset pages after `(created_at, id)` of the previous page's last row. */
export async function listCodingSessions(
  db: CommonQueryMethods,
  organizationId: string,
  filter: { source?: 'upload' | 'telemetry'; externalId?: string; after: { at: string; id: string } | null; limit: number },
) {
  const conditions = [sql.fragment`organization_id = ${organizationId}`];
  if (filter.source) conditions.push(sql.fragment`source = ${filter.source}`);
  if (filter.externalId !== undefined) conditions.push(sql.fragment`external_id = ${filter.externalId}`);
  if (filter.after) conditions.push(sql.fragment`(created_at, id) < (${filter.after.at}::timestamptz, ${filter.after.id}::uuid)`);
  return db.any(sql.type(codingSessionListRow)`
    SELECT id, source, external_id, title, format, event_count, agent_version, created_at, updated_at,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
    FROM coding_sessions WHERE ${sql.join(conditions, sql.fragment` AND `)}
    ORDER BY created_at DESC, id DESC LIMIT ${filter.limit}`);
}
