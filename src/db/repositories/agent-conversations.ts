import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { isUuid } from '../uuid.js';
import { sessionRow } from './agent-sessions.js';
import { changeColumns, changeConditions, changeOrder, changePage, type ChangePage, type ChangeWindow } from './sync-pages.js';

/** Who reads: an API key (no user) or a user. */
export interface Reader {
  organizationId: string;
  userId: string | null;
}

/**
 * Conversation access (architecture): a restricted conversation is visible only to its allowed
 * users and to a participant's ownerUserId; organization keys see workspace conversations.
 */
export function visibleTo(reader: Reader) {
  // The conversations of an application deleted with them are gone at once (the sweep deletes their rows).
  const kept = sql.fragment`NOT EXISTS (SELECT 1 FROM agent_applications da WHERE da.id = s.application_id AND da.sessions_deleted_at IS NOT NULL)`;
  if (reader.userId === null) return sql.fragment`(s.restricted_to IS NULL AND ${kept})`;
  return sql.fragment`((s.restricted_to IS NULL OR ${reader.userId}::uuid = ANY(s.restricted_to)
    OR EXISTS (SELECT 1 FROM agent_participants p WHERE p.session_id = s.id AND p.owner_user_id = ${reader.userId}::uuid)) AND ${kept})`;
}

/**
 * The processing status reads report (the sessions list and detail, webhooks' `session`), from the
 * stored one and the session's progress (decision 0209; the glossary of
 * src/domain/agent-session-state.ts): `billing_blocked` and `capture_disabled` as stored;
 * otherwise `pending` while received events wait for a pass (events above the watermark, those
 * past an open session's gap too, and revised or late ones: the pending-events index of migration
 * 0034), `processing` while its
 * responses' analyses are queued, and `completed` when nothing is left. (Not the wake: a drainer's
 * pass keeps it while the analyses it will run are queued.) A pass moves the row when it advances
 * the watermark, and an analysis round when it empties the session's queue, so that incremental
 * sync sees every change of this value.
 */
export const reportedProcessingStatus = sql.fragment`CASE
    WHEN s.processing_status IN ('billing_blocked', 'capture_disabled') THEN s.processing_status
    WHEN coalesce(s.highest_sequence, -1) > coalesce(s.processed_through_sequence, -1)
      OR EXISTS (SELECT 1 FROM agent_events e WHERE e.session_id = s.id AND e.processed_revision <> e.revision) THEN 'pending'
    WHEN EXISTS (SELECT 1 FROM agent_analysis_jobs j WHERE j.session_id = s.id AND j.status = 'queued') THEN 'processing'
    ELSE 'completed' END`;

/** A session as reads show it: the stored row and the processing status reported for it. */
export const sessionReadRow = sessionRow.extend({
  reported_processing_status: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  application_name: z.string().nullable(),
});

/** The columns of a session read (`s`): the row, its reported processing status, its application's name. */
const sessionReadColumns = sql.fragment`s.*, ${reportedProcessingStatus} AS reported_processing_status,
  (SELECT a.name FROM agent_applications a WHERE a.id = s.application_id) AS application_name`;
export type SessionReadRow = z.infer<typeof sessionReadRow>;

/** The session list's filters (each absent: any). */
export interface SessionFilter {
  applicationId?: string | undefined;
  status?: string | undefined;
  processingStatus?: string | undefined;
  /** Created at or after this instant (ISO 8601). */
  createdFrom?: string | undefined;
  /** Created before this instant (ISO 8601). */
  createdTo?: string | undefined;
}

function sessionConditions(filter: SessionFilter) {
  const app = filter.applicationId ? sql.fragment`AND s.application_id = ${filter.applicationId}` : sql.fragment``;
  const status = filter.status ? sql.fragment`AND s.status = ${filter.status}` : sql.fragment``;
  const processing = filter.processingStatus
    ? sql.fragment`AND (${reportedProcessingStatus}) = ${filter.processingStatus}`
    : sql.fragment``;
  const from = filter.createdFrom ? sql.fragment`AND s.created_at >= ${filter.createdFrom}::timestamptz` : sql.fragment``;
  const to = filter.createdTo ? sql.fragment`AND s.created_at < ${filter.createdTo}::timestamptz` : sql.fragment``;
  return sql.fragment`${app} ${status} ${processing} ${from} ${to}`;
}

export async function listSessions(
  db: CommonQueryMethods,
  reader: Reader,
  filter: SessionFilter & { offset: number; limit: number },
): Promise<readonly SessionReadRow[]> {
  return db.any(sql.type(sessionReadRow)`
    SELECT ${sessionReadColumns} FROM agent_sessions s
    WHERE s.organization_id = ${reader.organizationId} AND ${visibleTo(reader)} ${sessionConditions(filter)}
    ORDER BY s.created_at DESC, s.id LIMIT ${filter.limit} OFFSET ${filter.offset}`);
}

/** The sessions changed after a position, oldest change first (incremental sync, migration 0026). */
export async function sessionChanges(
  db: CommonQueryMethods,
  reader: Reader,
  filter: SessionFilter,
  w: ChangeWindow,
): Promise<ChangePage<SessionReadRow>> {
  const s = sql.identifier(['s']);
  return changePage(
    db,
    sessionReadRow,
    sql.fragment`
      SELECT ${changeColumns(s)}, ${sessionReadColumns} FROM agent_sessions s
      WHERE s.organization_id = ${reader.organizationId} AND ${visibleTo(reader)} ${sessionConditions(filter)} AND ${changeConditions(s, w)}
      ${changeOrder(s, w)}`,
  );
}

export async function findSession(db: CommonQueryMethods, reader: Reader, sessionId: string): Promise<SessionReadRow | null> {
  return (await findSessions(db, reader, [sessionId]))[0] ?? null;
}

/** Several sessions by id (unknown, invalid or invisible ids are left out). */
export async function findSessions(
  db: CommonQueryMethods,
  reader: Reader,
  sessionIds: readonly string[],
): Promise<readonly SessionReadRow[]> {
  const ids = sessionIds.filter(isUuid);
  if (ids.length === 0) return [];
  return db.any(sql.type(sessionReadRow)`
    SELECT ${sessionReadColumns} FROM agent_sessions s
    WHERE s.id = ANY(${sql.array(ids, 'uuid')}) AND s.organization_id = ${reader.organizationId} AND ${visibleTo(reader)}`);
}

export const participantRow = z.object({
  external_id: z.string().nullable(),
  display_name: z.string().nullable(),
  username: z.string().nullable(),
  email: z.string().nullable(),
  person_id: z.string().nullable(),
  company_external_id: z.string().nullable(),
  boundary: z.string().nullable(),
  owner_user_id: z.string().nullable(),
  properties: z.unknown(),
});

export async function sessionParticipants(db: CommonQueryMethods, sessionId: string) {
  return db.any(sql.type(participantRow)`
    SELECT p.external_id, p.display_name, p.username, p.email, pe.uuid AS person_id, p.company_external_id, p.boundary,
      p.owner_user_id, p.properties
    FROM agent_participants p LEFT JOIN people pe ON pe.id = p.person_id
    WHERE p.session_id = ${sessionId} ORDER BY p.id`);
}

export const eventRow = z.object({
  external_event_id: z.string(),
  sequence: z.number(),
  revision: z.number(),
  type: z.string(),
  occurred_at: z.string(),
  final: z.boolean().nullable(),
  payload: z.record(z.string(), z.unknown()).nullable(),
  revision_count: z.number(),
});
export type EventRow = z.infer<typeof eventRow>;

export async function sessionEvents(db: CommonQueryMethods, sessionId: string, page: { afterSequence: number; limit: number }) {
  return db.any(sql.type(eventRow)`
    SELECT e.external_event_id, e.sequence, e.revision, e.type, e.occurred_at, e.final, e.payload,
      (SELECT count(*) FROM agent_event_revisions r WHERE r.event_id = e.id)::int AS revision_count
    FROM agent_events e
    WHERE e.session_id = ${sessionId} AND e.sequence > ${page.afterSequence}
    ORDER BY e.sequence LIMIT ${page.limit}`);
}

/** Token counts and latencies are summed as sent (integers without a maximum): a total stops at the largest safe integer. */
const MAX_TOTAL = Number.MAX_SAFE_INTEGER;

export const answerTotalsRow = z.object({
  answers: z.number(),
  answers_with_usage: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  median_latency_ms: z.number().nullable(),
});
export type AnswerTotalsRow = z.infer<typeof answerTotalsRow>;

/**
 * A session's answers (its assistant messages) and what their stored content reports (`usage`:
 * input and output tokens, latency), in one aggregate over its events. Content that is not stored
 * (content capture off, removed by retention) reports nothing: `answers_with_usage` says how many did.
 */
export async function sessionAnswerTotals(db: CommonQueryMethods, sessionId: string): Promise<AnswerTotalsRow> {
  return db.one(sql.type(answerTotalsRow)`
    WITH answers AS (
      SELECT e.payload -> 'usage' AS usage FROM agent_events e
      WHERE e.session_id = ${sessionId} AND e.type = 'assistant_message'
    ), reported AS (
      SELECT
        CASE WHEN jsonb_typeof(usage -> 'inputTokens') = 'number' THEN (usage ->> 'inputTokens')::numeric END AS input_tokens,
        CASE WHEN jsonb_typeof(usage -> 'outputTokens') = 'number' THEN (usage ->> 'outputTokens')::numeric END AS output_tokens,
        CASE WHEN jsonb_typeof(usage -> 'latencyMs') = 'number' THEN LEAST((usage ->> 'latencyMs')::numeric, ${MAX_TOTAL}) END AS latency_ms
      FROM answers
    )
    SELECT count(*)::int AS answers,
      count(*) FILTER (WHERE input_tokens IS NOT NULL OR output_tokens IS NOT NULL OR latency_ms IS NOT NULL)::int AS answers_with_usage,
      LEAST(COALESCE(sum(input_tokens), 0), ${MAX_TOTAL})::bigint AS input_tokens,
      LEAST(COALESCE(sum(output_tokens), 0), ${MAX_TOTAL})::bigint AS output_tokens,
      -- half up (a float's round() is half to even), and a float near the largest safe integer may round above it
      (SELECT CASE WHEN m IS NOT NULL THEN LEAST(floor(m + 0.5), ${MAX_TOTAL})::bigint END
        FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms::float8) AS m) median) AS median_latency_ms
    FROM reported`);
}
