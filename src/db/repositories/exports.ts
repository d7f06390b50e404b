import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';

/*
 * The organization export's reads (issue 32, point 3): each a batch of lines in key order, built as
 * JSON by PostgreSQL (the exporting process only passes text on: its memory stays flat however
 * large the organization). The line types and their fields are documented in
 * src/contracts/export.ts and docs/guides/data-lifecycle.md.
 */

/** An instant as the API shows it: ISO 8601 UTC with milliseconds. */
const at = (column: FragmentSqlToken) => sql.fragment`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The kinds in the order an import needs them (what a line refers to comes before it). */
export const EXPORT_KINDS = [
  'feedback_source',
  'person',
  'feedback_record',
  'recording',
  'agent_application',
  'agent_session',
  'agent_event',
  'agent_signal',
] as const;

export type ExportKind = (typeof EXPORT_KINDS)[number];

/** The e-mails of these users (sorted): users are not exported, and an import finds them by e-mail. */
const userEmails = (ids: FragmentSqlToken) =>
  sql.fragment`ARRAY(SELECT lower(u.email) FROM users u WHERE u.id = ANY(${ids}) ORDER BY lower(u.email))`;

const batchRow = z.object({ k: z.string(), line: z.string() });

function query(kind: ExportKind, organizationId: string, after: string | null, limit: number): FragmentSqlToken {
  const sessionsOfOrg = sql.fragment`
    SELECT s.id FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
    WHERE s.organization_id = ${organizationId} AND a.sessions_deleted_at IS NULL`;
  switch (kind) {
    case 'feedback_source':
      return sql.fragment`
        SELECT id::text AS k, json_build_object('type', 'feedback_source', 'id', id, 'name', name, 'sourceType', type,
          'createdAt', ${at(sql.fragment`created_at`)})::text AS line
        FROM feedback_sources WHERE organization_id = ${organizationId} AND id > ${after ?? '0'}::bigint ORDER BY id LIMIT ${limit}`;
    case 'person':
      return sql.fragment`
        SELECT p.id::text AS k, json_build_object('type', 'person', 'id', p.uuid, 'email', p.email, 'firstName', p.first_name,
          'lastName', p.last_name, 'boundary', p.boundary,
          'company', CASE WHEN c.id IS NULL THEN NULL ELSE json_build_object('name', c.name, 'domain', c.domain) END,
          'erased', p.erased_at IS NOT NULL, 'createdAt', ${at(sql.fragment`p.created_at`)})::text AS line
        FROM people p LEFT JOIN companies c ON c.id = p.company_id
        WHERE p.organization_id = ${organizationId} AND p.id > ${after ?? '0'}::bigint ORDER BY p.id LIMIT ${limit}`;
    case 'feedback_record':
      return sql.fragment`
        SELECT r.id::text AS k, json_build_object('type', 'feedback_record', 'sourceId', r.feedback_source_id, 'externalId', r.external_id,
          'displayTs', ${at(sql.fragment`r.display_ts`)}, 'personId', p.uuid, 'fields', r.fields,
          'createdAt', ${at(sql.fragment`r.created_at`)})::text AS line
        FROM feedback_records r LEFT JOIN people p ON p.id = r.person_id
        WHERE r.organization_id = ${organizationId} AND r.id > ${after ?? '0'}::bigint ORDER BY r.id LIMIT ${limit}`;
    case 'recording':
      return sql.fragment`
        SELECT r.id::text AS k, json_build_object('type', 'recording', 'id', r.id, 'name', r.name, 'source', r.source,
          'recordedAt', ${at(sql.fragment`r.recorded_at`)}, 'assetStatus', r.asset_status, 'transcriptStatus', r.transcript_status,
          'transcriptSource', r.transcript_source,
          'folders', ARRAY(SELECT f.name FROM recording_folders rf JOIN folders f ON f.id = rf.folder_id WHERE rf.recording_id = r.id ORDER BY f.name),
          'metadata', (SELECT json_build_object('externalId', m.external_id, 'values', coalesce(json_agg(json_build_object(
              'field', mf.name, 'fieldType', mf.type, 'value', v.value) ORDER BY v.position) FILTER (WHERE v.record_id IS NOT NULL), '[]'))
            FROM metadata_records m LEFT JOIN metadata_values v ON v.record_id = m.id LEFT JOIN metadata_fields mf ON mf.id = v.field_id
            WHERE m.recording_id = r.id GROUP BY m.id, m.external_id LIMIT 1),
          'participants', coalesce((SELECT json_agg(json_build_object('speaker', rp.speaker, 'personId', p.uuid) ORDER BY rp.speaker)
            FROM recording_participants rp JOIN people p ON p.id = rp.person_id WHERE rp.recording_id = r.id), '[]'),
          'utterances', coalesce((SELECT json_agg(json_build_object('startSec', u.start_sec, 'endSec', u.end_sec, 'speaker', u.speaker,
            'text', u.text) ORDER BY u.position) FROM transcript_utterances u WHERE u.recording_id = r.id), '[]'),
          'createdAt', ${at(sql.fragment`r.created_at`)})::text AS line
        FROM recordings r WHERE r.organization_id = ${organizationId}
          AND r.id > ${after ?? '00000000-0000-0000-0000-000000000000'}::uuid ORDER BY r.id LIMIT ${limit}`;
    case 'agent_application':
      // Users are not exported (accounts, not data): who may read a conversation goes by e-mail.
      return sql.fragment`
        SELECT a.id::text AS k, json_build_object('type', 'agent_application', 'id', a.id, 'name', a.name, 'agentKey', a.agent_key,
          'status', a.status, 'contentCapture', a.content_capture, 'redactedFieldNames', a.redacted_field_names,
          'redactedTextPatterns', a.redacted_text_patterns, 'retentionDays', a.retention_days,
          'allowedEnvironments', a.allowed_environments, 'access', a.access, 'accessUserEmails', ${userEmails(sql.fragment`a.access_user_ids`)},
          'deleted', a.deleted_at IS NOT NULL, 'createdAt', ${at(sql.fragment`a.created_at`)})::text AS line
        FROM agent_applications a WHERE a.organization_id = ${organizationId} AND a.sessions_deleted_at IS NULL
          AND a.id > ${after ?? '00000000-0000-0000-0000-000000000000'}::uuid ORDER BY a.id LIMIT ${limit}`;
    case 'agent_session':
      return sql.fragment`
        SELECT s.id::text AS k, json_build_object('type', 'agent_session', 'id', s.id, 'applicationId', s.application_id,
          'agentKey', a.agent_key, 'externalSessionId', s.external_session_id, 'status', s.status, 'agentVersion', s.agent_version,
          'source', s.source, 'context', s.context,
          'restrictedToUserEmails', CASE WHEN s.restricted_to IS NULL THEN NULL ELSE ${userEmails(sql.fragment`s.restricted_to`)} END,
          'createdAt', ${at(sql.fragment`s.created_at`)}, 'endedAt', ${at(sql.fragment`s.ended_at`)},
          'participants', coalesce((SELECT json_agg(json_build_object('participantKey', p.participant_key, 'externalId', p.external_id,
              'displayName', p.display_name, 'username', p.username, 'email', p.email, 'personId', pe.uuid,
              'companyExternalId', p.company_external_id, 'boundary', p.boundary, 'ownerUserEmail', u.email,
              'properties', p.properties) ORDER BY p.id)
            FROM agent_participants p LEFT JOIN people pe ON pe.id = p.person_id LEFT JOIN users u ON u.id = p.owner_user_id
            WHERE p.session_id = s.id), '[]'))::text AS line
        FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
        WHERE s.organization_id = ${organizationId} AND a.sessions_deleted_at IS NULL
          AND s.id > ${after ?? '00000000-0000-0000-0000-000000000000'}::uuid ORDER BY s.id LIMIT ${limit}`;
    case 'agent_event': {
      // In session order, each session's in sequence order: the organization's sessions in id order
      // (agent_sessions_organization_id_idx), each one's events by the session's sequence index, until
      // the batch is full (a session without events never ends a batch early). The key:
      // `<session id>/<sequence>`.
      const [afterSession, afterSequence] = after ? after.split('/') : ['00000000-0000-0000-0000-000000000000', '-1'];
      return sql.fragment`
        SELECT e.session_id::text || '/' || e.sequence AS k, json_build_object('type', 'agent_event', 'sessionId', e.session_id,
          'externalEventId', e.external_event_id, 'sequence', e.sequence, 'revision', e.revision, 'eventType', e.type,
          'occurredAt', ${at(sql.fragment`e.occurred_at`)}, 'final', e.final, 'contentHash', encode(e.content_hash, 'hex'),
          'payload', e.payload)::text AS line
        FROM (SELECT s.id FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
              WHERE s.organization_id = ${organizationId} AND a.sessions_deleted_at IS NULL AND s.id >= ${afterSession!}::uuid
              ORDER BY s.id) s
        CROSS JOIN LATERAL (SELECT * FROM agent_events e WHERE e.session_id = s.id
              AND (s.id > ${afterSession!}::uuid OR e.sequence > ${afterSequence!}::bigint) ORDER BY e.sequence LIMIT ${limit}) e
        ORDER BY s.id, e.sequence LIMIT ${limit}`;
    }
    case 'agent_signal':
      return sql.fragment`
        SELECT g.id::text AS k, json_build_object('type', 'agent_signal', 'id', g.id, 'sessionId', g.session_id,
          'eventExternalId', g.event_external_id, 'eventRevision', g.event_revision, 'producer', g.producer, 'source', g.source, 'kind', g.kind, 'rating', g.rating, 'labels', g.labels,
          'comment', g.comment, 'summary', g.summary, 'createdAt', ${at(sql.fragment`g.created_at`)})::text AS line
        FROM agent_signals g WHERE g.organization_id = ${organizationId} AND g.session_id IN (${sessionsOfOrg})
          AND g.id > ${after ?? '00000000-0000-0000-0000-000000000000'}::uuid ORDER BY g.id LIMIT ${limit}`;
  }
}

/** One batch of an export: up to `limit` lines of `kind` after key `after`, and the last key (null: the kind is done). */
export async function exportBatch(
  db: CommonQueryMethods,
  kind: ExportKind,
  organizationId: string,
  after: string | null,
  limit: number,
): Promise<{ lines: string[]; last: string | null }> {
  const rows = await db.any(sql.type(batchRow)`${query(kind, organizationId, after, limit)}`);
  return { lines: rows.map((r) => r.line), last: rows.length < limit ? null : (rows.at(-1)?.k ?? null) };
}

/** Takes the organization's export lock until the transaction ends: false when another export holds it (on any replica). */
export async function lockOrganizationExport(tx: CommonQueryMethods, organizationId: string): Promise<boolean> {
  return tx.oneFirst(sql.type(z.object({ ok: z.boolean() }))`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${`export:${organizationId}`}, 0)) AS ok`);
}

/** Makes the transaction a consistent, read-only snapshot (the first statement of the transaction). */
export async function snapshotTransaction(tx: CommonQueryMethods): Promise<void> {
  await tx.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
}
