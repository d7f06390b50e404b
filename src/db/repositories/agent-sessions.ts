import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { EventState, IncomingEvent } from '../../domain/agent-events.js';
import { toUtcInstant } from '../../domain/time.js';
import { authorityStamp } from './agent-applications.js';

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
  /** The traceparent of the ingest that requested the latest wake, when traced (migration 0015). */
  wake_trace_parent: z.string().nullable(),
  last_ingest_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SessionRow = z.infer<typeof sessionRow>;

export interface SessionKey {
  organizationId: string;
  applicationId: string;
  externalSessionId: string;
  restrictedTo: readonly string[] | null;
}

/** A locked session, whether this transaction created it, and its request's authority now (see authorityStamp). */
export type LockedSessionRow = SessionRow & { created: boolean; stamp: string | null };

/**
 * Creates each session on first sight and locks its row for the rest of the transaction: requests
 * for one session are serialized here, so that concurrent retries deduplicate instead of racing.
 * One statement for any number of sessions (distinct keys), locked in (application, external id)
 * order, the order every caller that locks several sessions and waits uses: two never deadlock.
 * The row is not changed (the ingest's update sets `last_ingest_at`): a request refused after
 * this statement leaves nothing behind. Each row carries its request's authority as it is now,
 * which the ingest compares with the lookup it was prepared from.
 */
export async function lockSessions(tx: CommonQueryMethods, keys: readonly SessionKey[]): Promise<readonly LockedSessionRow[]> {
  const records = keys.map((k) => ({
    organization_id: k.organizationId,
    application_id: k.applicationId,
    external_session_id: k.externalSessionId,
    restricted_to: k.restrictedTo,
  }));
  return tx.any(sql.type(sessionRow.extend({ created: z.boolean(), stamp: z.string().nullable() }))`
    INSERT INTO agent_sessions AS s (organization_id, application_id, external_session_id, restricted_to)
    SELECT x.organization_id, x.application_id, x.external_session_id, x.restricted_to
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(organization_id uuid, application_id uuid, external_session_id text, restricted_to uuid[])
    ORDER BY x.application_id, x.external_session_id COLLATE "C"
    ON CONFLICT (application_id, external_session_id) DO UPDATE SET last_ingest_at = s.last_ingest_at
    RETURNING s.*, (s.xmax = 0) AS created, (
      SELECT ${authorityStamp} FROM agent_applications a JOIN organizations o ON o.id = a.organization_id WHERE a.id = s.application_id
    ) AS stamp`);
}

/** Sessions an ingest created and then refused: removed in the same transaction, so nothing is stored. */
export async function deleteCreatedSessions(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  await tx.query(sql.unsafe`DELETE FROM agent_sessions WHERE id = ANY(${sql.array([...sessionIds], 'uuid')})`);
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

/** What one request can touch in its session: the same ids, the same sequences, or feedback targets. */
export interface StateQuery {
  sessionId: string;
  externalIds: readonly string[];
  sequences: readonly number[];
}

/** The stored events the requests can touch, per session; one statement for all of them. */
export async function loadEventStates(tx: CommonQueryMethods, queries: readonly StateQuery[]): Promise<Map<string, EventState[]>> {
  const result = new Map<string, EventState[]>(queries.map((q) => [q.sessionId, []]));
  if (!queries.length) return result;
  const records = queries.map((q) => ({ session_id: q.sessionId, ids: q.externalIds, sequences: q.sequences }));
  const rows = await tx.any(sql.type(stateRow.extend({ session_id: z.string() }))`
    SELECT e.session_id, e.external_event_id, e.sequence, e.revision, e.type, e.final, encode(e.content_hash, 'hex') AS content_hash
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(session_id uuid, ids text[], sequences bigint[])
    CROSS JOIN LATERAL (
      -- OFFSET 0 keeps the lookup per session (two index probes each) instead of a join over the whole table.
      SELECT * FROM agent_events e
      WHERE e.session_id = x.session_id AND (e.external_event_id = ANY(x.ids) OR e.sequence = ANY(x.sequences)) OFFSET 0) e`);
  for (const r of rows) {
    result.get(r.session_id)!.push({
      externalEventId: r.external_event_id,
      sequence: r.sequence,
      revision: r.revision,
      type: r.type,
      final: r.final,
      contentHash: r.content_hash,
    });
  }
  return result;
}

/** The participants' external ids of each session (one statement for all). */
export async function participantExternalIds(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const result = new Map(sessionIds.map((id) => [id, new Set<string>()]));
  if (!sessionIds.length) return result;
  const rows = await tx.any(sql.type(z.object({ session_id: z.string(), external_id: z.string() }))`
    SELECT session_id, external_id FROM agent_participants
    WHERE session_id = ANY(${sql.array([...sessionIds], 'uuid')}) AND external_id IS NOT NULL`);
  for (const r of rows) result.get(r.session_id)!.add(r.external_id);
  return result;
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
  const ids = sql.array(
    events.map((e) => e.externalEventId),
    'text',
  );
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
  sessionId: string;
  status: 'open' | 'ended' | 'abandoned';
  /** Off: `capture_disabled`; on: `pending`, or `billing_blocked` while the balance cannot pay an analysis. */
  captureContent: boolean;
  agentVersion: string | null;
  source: unknown;
  context: unknown;
  /** The accepted new events, inserted by the same statement. */
  newEvents: readonly IncomingEvent[];
  highestSequence: number | null;
  /** The ingest gave the workflow work (new or revised events, a status change): request a wake. */
  wake: boolean;
  /** The ingest's W3C traceparent (tracing on): kept with the wake it requests (the first ingest's, while one is pending). */
  traceParent: string | null;
}

/**
 * Inserts the accepted new events and updates the sessions (status, counts, highest sequence, the
 * wake request) in one statement for any number of sessions (distinct). `analysisCreditCost`: the
 * credits one analysis costs (a balance below it is `billing_blocked`).
 */
export async function updateSessionsAfterIngest(
  tx: CommonQueryMethods,
  updates: readonly SessionUpdate[],
  analysisCreditCost: number,
): Promise<readonly SessionRow[]> {
  if (!updates.length) return [];
  const events = updates.flatMap((u) => eventRecords(u.newEvents, u.captureContent).map((e) => ({ session_id: u.sessionId, ...e })));
  const sessions = updates.map((u) => ({
    id: u.sessionId,
    status: u.status,
    capture: u.captureContent,
    agent_version: u.agentVersion,
    source: u.source ?? null,
    context: u.context ?? null,
    highest_sequence: u.highestSequence,
    wake: u.wake,
    trace_parent: u.traceParent,
  }));
  return tx.any(sql.type(sessionRow)`
    WITH inserted AS (
      INSERT INTO agent_events (session_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
      SELECT x.session_id, x.external_event_id, x.sequence, x.revision, x.type, x.occurred_at, x.final, decode(x.content_hash, 'hex'), x.payload
      FROM jsonb_to_recordset(${sql.jsonb(events)})
        AS x(session_id uuid, external_event_id text, sequence bigint, revision integer, type text, occurred_at timestamptz, final boolean, content_hash text, payload jsonb)
      RETURNING session_id
    ), counts AS (SELECT session_id, count(*) AS n FROM inserted GROUP BY session_id)
    UPDATE agent_sessions s SET
      status = u.status,
      ended_at = CASE WHEN u.status <> 'open' THEN coalesce(s.ended_at, now()) ELSE s.ended_at END,
      processing_status = CASE WHEN NOT u.capture THEN 'capture_disabled'
        WHEN (SELECT credit_balance FROM organizations WHERE id = s.organization_id) >= ${analysisCreditCost} THEN 'pending' ELSE 'billing_blocked' END,
      agent_version = coalesce(u.agent_version, s.agent_version),
      source = coalesce(u.source, s.source),
      context = coalesce(u.context, s.context),
      event_count = s.event_count + coalesce((SELECT n FROM counts c WHERE c.session_id = s.id), 0),
      highest_sequence = greatest(s.highest_sequence, u.highest_sequence),
      wake_requested_at = CASE WHEN u.wake THEN coalesce(s.wake_requested_at, now()) ELSE s.wake_requested_at END,
      wake_trace_parent = CASE WHEN u.wake AND s.wake_requested_at IS NULL THEN u.trace_parent ELSE s.wake_trace_parent END,
      last_ingest_at = now(), updated_at = now()
    FROM jsonb_to_recordset(${sql.jsonb(sessions as never)})
      AS u(id uuid, status text, capture boolean, agent_version text, source jsonb, context jsonb, highest_sequence bigint, wake boolean, trace_parent text)
    WHERE s.id = u.id AND s.id = ANY(${sql.array(
      updates.map((u) => u.sessionId),
      'uuid',
    )})
    RETURNING s.*`);
}

/**
 * Sessions whose wake was requested more than `olderThanSeconds` ago and never taken (the signal
 * was lost or Temporal was unreachable): the reconciler wakes them. Oldest first.
 */
export async function strandedWakes(db: CommonQueryMethods, olderThanSeconds: number, limit: number) {
  return db.any(sql.type(
    z.object({
      id: z.string(),
      organization_id: z.string(),
      status: z.enum(['open', 'ended', 'abandoned']),
      highest_sequence: z.number().nullable(),
      processing_status: z.string(),
      wake_trace_parent: z.string().nullable(),
    }),
  )`
    SELECT id, organization_id, status, highest_sequence, processing_status, wake_trace_parent FROM agent_sessions
    WHERE wake_requested_at < now() - ${olderThanSeconds} * interval '1 second'
    ORDER BY wake_requested_at LIMIT ${limit}`);
}
