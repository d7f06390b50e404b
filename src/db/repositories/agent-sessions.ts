import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { EventState, IncomingEvent } from '../../domain/agent-events.js';
import { toUtcInstant } from '../../domain/time.js';

export const sessionRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  application_id: z.string(),
  external_session_id: z.string(),
  status: z.enum(['open', 'ended', 'abandoned']),
  processing_status: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  agent_version: z.string().nullable(),
  source: z.unknown(),
  context: z.unknown(),
  event_count: z.number(),
  highest_sequence: z.number().nullable(),
  processed_through_sequence: z.number().nullable(),
  restricted_to: z.array(z.string()).nullable(),
  content_purged_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  /** Set by an ingest that gave the workflow work, cleared by the workflow's pass (see migration 0011). */
  wake_requested_at: z.string().nullable(),
  last_ingest_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SessionRow = z.infer<typeof sessionRow>;

/**
 * Creates the session on first sight and locks its row for the rest of the transaction: requests
 * for one session are serialized here, so that concurrent retries deduplicate instead of racing.
 */
export async function lockSession(
  tx: CommonQueryMethods,
  input: { organizationId: string; applicationId: string; externalSessionId: string; restrictedTo: readonly string[] | null },
): Promise<SessionRow> {
  const restricted = input.restrictedTo ? sql.array([...input.restrictedTo], 'uuid') : null;
  // One statement: DO UPDATE takes the row lock whether the row is new or not.
  return tx.one(sql.type(sessionRow)`
    INSERT INTO agent_sessions AS s (organization_id, application_id, external_session_id, restricted_to)
    VALUES (${input.organizationId}, ${input.applicationId}, ${input.externalSessionId}, ${restricted})
    ON CONFLICT (application_id, external_session_id) DO UPDATE SET last_ingest_at = now()
    RETURNING s.*`);
}

/**
 * Content capture off (spec): only counts and status are kept. Deletes the session's content,
 * participants, revision history, jobs and signals; event rows keep sequence, type, revision and
 * the hash that deduplicates retries.
 */
export async function purgeSessionContent(tx: CommonQueryMethods, sessionId: string): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM agent_signals WHERE session_id = ${sessionId}`);
  await tx.query(sql.unsafe`DELETE FROM agent_analysis_jobs WHERE session_id = ${sessionId}`);
  await tx.query(sql.unsafe`
    DELETE FROM agent_event_revisions WHERE event_id IN (SELECT id FROM agent_events WHERE session_id = ${sessionId})`);
  await tx.query(sql.unsafe`DELETE FROM agent_participants WHERE session_id = ${sessionId}`);
  await tx.query(sql.unsafe`UPDATE agent_events SET payload = NULL WHERE session_id = ${sessionId} AND payload IS NOT NULL`);
  await tx.query(sql.unsafe`
    UPDATE agent_sessions SET context = NULL, source = NULL, agent_version = NULL, content_purged_at = coalesce(content_purged_at, now())
    WHERE id = ${sessionId}`);
}

const stateRow = z.object({
  external_event_id: z.string(),
  sequence: z.number(),
  revision: z.number(),
  type: z.enum(['user_message', 'assistant_message', 'feedback']),
  final: z.boolean().nullable(),
  content_hash: z.string(),
});

/** The stored events a request can touch: same ids, same sequences, or named as feedback targets. */
export async function loadEventStates(
  tx: CommonQueryMethods,
  sessionId: string,
  externalIds: readonly string[],
  sequences: readonly number[],
): Promise<EventState[]> {
  const rows = await tx.any(sql.type(stateRow)`
    SELECT external_event_id, sequence, revision, type, final, encode(content_hash, 'hex') AS content_hash
    FROM agent_events
    WHERE session_id = ${sessionId}
      AND (external_event_id = ANY(${sql.array([...externalIds], 'text')}) OR sequence = ANY(${sql.array([...sequences], 'int8')}))`);
  return rows.map((r) => ({
    externalEventId: r.external_event_id,
    sequence: r.sequence,
    revision: r.revision,
    type: r.type,
    final: r.final,
    contentHash: r.content_hash,
  }));
}

export async function participantExternalIds(tx: CommonQueryMethods, sessionId: string): Promise<Set<string>> {
  const ids = await tx.anyFirst(sql.type(z.object({ external_id: z.string() }))`
    SELECT external_id FROM agent_participants WHERE session_id = ${sessionId} AND external_id IS NOT NULL`);
  return new Set(ids);
}

function eventRecords(events: readonly IncomingEvent[], captureContent: boolean) {
  return events.map((e) => ({
    external_event_id: e.externalEventId,
    sequence: e.sequence,
    revision: e.revision,
    type: e.type,
    occurred_at: toUtcInstant(e.occurredAt),
    final: e.final,
    content_hash: e.contentHash,
    payload: captureContent ? e.payload : null,
  }));
}

/** One statement for the whole batch (up to 500 events). */
/** Keeps each replaced content in the revision history, then writes the new revision in place. */
export async function reviseEvents(tx: CommonQueryMethods, sessionId: string, events: readonly IncomingEvent[], captureContent: boolean) {
  if (events.length === 0) return;
  const ids = sql.array(events.map((e) => e.externalEventId), 'text');
  await tx.query(sql.unsafe`
    INSERT INTO agent_event_revisions (event_id, revision, final, content_hash, payload)
    SELECT id, revision, final, content_hash, payload FROM agent_events
    WHERE session_id = ${sessionId} AND external_event_id = ANY(${ids})
    ON CONFLICT (event_id, revision) DO NOTHING`);
  await tx.query(sql.unsafe`
    UPDATE agent_events e SET revision = x.revision, final = x.final, content_hash = decode(x.content_hash, 'hex'),
      payload = x.payload, updated_at = now()
    FROM jsonb_to_recordset(${sql.jsonb(eventRecords(events, captureContent))})
      AS x(external_event_id text, revision integer, final boolean, content_hash text, payload jsonb)
    WHERE e.session_id = ${sessionId} AND e.external_event_id = x.external_event_id`);
}

export interface SessionUpdate {
  status: 'open' | 'ended' | 'abandoned';
  /** Off: `capture_disabled`; on: `pending`, or `billing_blocked` while the balance cannot pay an analysis. */
  captureContent: boolean;
  /** Credits one analysis costs. */
  analysisCreditCost: number;
  agentVersion: string | null;
  source: unknown;
  context: unknown;
  /** The accepted new events, inserted by the same statement. */
  newEvents: readonly IncomingEvent[];
  highestSequence: number | null;
  /** The ingest gave the workflow work (new or revised events, a status change): request a wake. */
  wake: boolean;
}

/**
 * Inserts the accepted new events and updates the session (status, counts, highest sequence, the
 * wake request) in one statement: one round trip fewer on every ingest.
 */
export async function updateSessionAfterIngest(tx: CommonQueryMethods, sessionId: string, u: SessionUpdate): Promise<SessionRow> {
  return tx.one(sql.type(sessionRow)`
    WITH inserted AS (
      INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
      SELECT ${sessionId}, x.external_event_id, x.sequence, x.revision, x.type, x.occurred_at, x.final, decode(x.content_hash, 'hex'), x.payload
      FROM jsonb_to_recordset(${sql.jsonb(eventRecords(u.newEvents, u.captureContent))})
        AS x(external_event_id text, sequence bigint, revision integer, type text, occurred_at timestamptz, final boolean, content_hash text, payload jsonb)
      RETURNING 1
    )
    UPDATE agent_sessions SET
      status = ${u.status},
      ended_at = CASE WHEN ${u.status} <> 'open' THEN coalesce(ended_at, now()) ELSE ended_at END,
      processing_status = CASE WHEN NOT ${u.captureContent} THEN 'capture_disabled'
        WHEN (SELECT credit_balance FROM organizations WHERE id = organization_id) >= ${u.analysisCreditCost} THEN 'pending' ELSE 'billing_blocked' END,
      agent_version = coalesce(${u.agentVersion}, agent_version),
      source = coalesce(${u.source === null ? null : sql.jsonb(u.source as never)}::jsonb, source),
      context = coalesce(${u.context === null ? null : sql.jsonb(u.context as never)}::jsonb, context),
      event_count = event_count + (SELECT count(*) FROM inserted),
      highest_sequence = greatest(highest_sequence, ${u.highestSequence}::bigint),
      wake_requested_at = CASE WHEN ${u.wake} THEN coalesce(wake_requested_at, now()) ELSE wake_requested_at END,
      last_ingest_at = now(), updated_at = now()
    WHERE id = ${sessionId}
    RETURNING *`);
}

/**
 * Sessions whose wake was requested more than `olderThanSeconds` ago and never taken (the signal
 * was lost or Temporal was unreachable): the reconciler wakes them. Oldest first.
 */
export async function strandedWakes(db: CommonQueryMethods, olderThanSeconds: number, limit: number) {
  return db.any(sql.type(z.object({
    id: z.string(), organization_id: z.string(), status: z.enum(['open', 'ended', 'abandoned']), highest_sequence: z.number().nullable(),
    processing_status: z.string(),
  }))`
    SELECT id, organization_id, status, highest_sequence, processing_status FROM agent_sessions
    WHERE wake_requested_at < now() - ${olderThanSeconds} * interval '1 second'
    ORDER BY wake_requested_at LIMIT ${limit}`);
}
