import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { StoredProgress } from '../../domain/agent-processing-plan.js';
import { unreadRows, type Tx } from '../pool.js';
import type { LockedSession } from './agent-sessions.js';

/**
 * A pass's reads and writes of events, signals, usage and analysis jobs (the session rows' are in
 * agent-sessions.ts). Every write is idempotent (ON CONFLICT, state checks).
 */

const progressRow = z.object({
  status: z.enum(['open', 'ended', 'abandoned']),
  processing_status: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  processed_through_sequence: z.number().nullable(),
  highest_sequence: z.number().nullable(),
});

export async function loadProgress(db: CommonQueryMethods, sessionId: string): Promise<StoredProgress | null> {
  const row = await db.maybeOne(sql.type(progressRow)`
    SELECT status, processing_status, processed_through_sequence, highest_sequence FROM agent_sessions WHERE id = ${sessionId}`);
  return (
    row && {
      status: row.status,
      processingStatus: row.processing_status,
      processedThroughSequence: row.processed_through_sequence,
      highestSequence: row.highest_sequence,
    }
  );
}

const processRow = z.object({
  id: z.number(),
  session_id: z.string(),
  sequence: z.number(),
  revision: z.number(),
  type: z.enum(['user_message', 'assistant_message', 'feedback']),
  final: z.boolean().nullable(),
  /** Null unless a revision or a late arrival marked the event (migration 0034): then the pass marks what it processed. */
  processed_revision: z.number().nullable(),
  has_content: z.boolean(),
  feedback: z
    .object({
      // Either may be a redacted field name of the application, and then was never stored.
      targetEventExternalId: z.string().optional(),
      rating: z.enum(['positive', 'negative']).optional(),
      labels: z.array(z.string()).optional(),
      comment: z.string().optional(),
    })
    .nullable(),
});
export type ProcessRow = z.infer<typeof processRow>;

/** A session whose pending events a pass reads, and its watermark (the pass's snapshot, or as stored). */
export interface PendingQuery {
  sessionId: string;
  watermark: number | null;
}

/**
 * Each session's pending events in sequence order, one page per session: those above its
 * watermark, and those at or below it that a revision or a late arrival marked (decision 0210).
 */
export async function pendingRows(
  tx: CommonQueryMethods,
  sessions: readonly PendingQuery[],
  limit: number,
): Promise<readonly ProcessRow[]> {
  if (!sessions.length) return [];
  const columns = sql.fragment`id, session_id, sequence, revision, type, final, processed_revision, payload IS NOT NULL AS has_content,
    payload->'feedback' AS feedback`;
  return tx.any(sql.prepared('pass_pending', processRow)`
    SELECT p.* FROM unnest(${sql.array(
      sessions.map((s) => s.sessionId),
      'uuid',
    )}, ${sql.array(
      sessions.map((s) => s.watermark ?? -1),
      'int8',
    )}) AS s(id, w) CROSS JOIN LATERAL (
      (SELECT ${columns} FROM agent_events WHERE session_id = s.id AND sequence > s.w ORDER BY sequence LIMIT ${limit})
      UNION ALL
      (SELECT ${columns} FROM agent_events WHERE session_id = s.id AND processed_revision <> revision AND sequence <= s.w
        ORDER BY sequence LIMIT ${limit})
      ORDER BY sequence LIMIT ${limit}) p`);
}

/** A processed event with the session it belongs to. */
export interface SessionEvent {
  session: LockedSession;
  row: ProcessRow;
}

/** A signal a statement inserted (not one it updated): the `signal.created` events are made from these. */
export const createdSignal = z.object({ id: z.string(), session_id: z.string() });
export type CreatedSignal = z.infer<typeof createdSignal>;

/**
 * Spec rule 5: a rated feedback event is an explicit signal, deterministic and free; a revision
 * updates it. Returns the signals it created (a revision's update is not one).
 */
export async function upsertExplicitSignals(tx: Tx, rows: readonly SessionEvent[]): Promise<readonly CreatedSignal[]> {
  // A signal names its rating and the response it rates: without either stored, there is none.
  const isSignal = (r: SessionEvent) => Boolean(r.row.feedback?.rating && r.row.feedback.targetEventExternalId);
  const rated = rows.filter(isSignal);
  const unrated = rows.filter((r) => r.row.type === 'feedback' && !isSignal(r));
  if (unrated.length) {
    await tx.query(sql.unsafe`
      DELETE FROM agent_signals WHERE source = 'explicit_feedback' AND event_id = ANY(${sql.array(
        unrated.map((r) => r.row.id),
        'int8',
      )})`);
  }
  if (!rated.length) return [];
  const records = rated.map(({ session, row: r }) => ({
    organization_id: session.organization_id,
    session_id: session.id,
    event_id: r.id,
    target: r.feedback!.targetEventExternalId,
    rating: r.feedback!.rating!,
    labels: r.feedback!.labels ?? [],
    comment: r.feedback!.comment ?? null,
    revision: r.revision,
  }));
  const written = await tx.any(sql.prepared('pass_signals_upsert', createdSignal.extend({ created: z.boolean() }))`
    INSERT INTO agent_signals (organization_id, session_id, event_id, event_external_id, source, kind, rating, labels, comment, event_revision, producer)
    SELECT x.organization_id, x.session_id, x.event_id, x.target, 'explicit_feedback', 'feedback', x.rating,
      ARRAY(SELECT jsonb_array_elements_text(x.labels)), x.comment, x.revision, 'explicit'
    FROM jsonb_to_recordset(${sql.jsonb(records)})
      AS x(organization_id uuid, session_id uuid, event_id bigint, target text, rating text, labels jsonb, comment text, revision integer)
    ON CONFLICT (event_id) WHERE source = 'explicit_feedback' DO UPDATE SET
      event_external_id = excluded.event_external_id, rating = excluded.rating, labels = excluded.labels,
      comment = excluded.comment, event_revision = excluded.event_revision
    RETURNING id, session_id, (xmax = 0) AS created`);
  return written.filter((r) => r.created).map(({ id, session_id }) => ({ id, session_id }));
}

/** Metering: one `agent_response_processed` unit per finalized assistant response, ever. Returns the sessions of the units added. */
export async function meterResponses(tx: CommonQueryMethods, responses: readonly SessionEvent[]): Promise<readonly string[]> {
  if (!responses.length) return [];
  const records = responses.map(({ session, row }) => ({
    organization_id: session.organization_id,
    application_id: session.application_id,
    session_id: session.id,
    event_id: row.id,
  }));
  return tx.anyFirst(sql.prepared('pass_meter', z.object({ session_id: z.string() }))`
    INSERT INTO usage_records (organization_id, application_id, session_id, event_id, unit, quantity)
    SELECT x.organization_id, x.application_id, x.session_id, x.event_id, 'agent_response_processed', 1
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(organization_id uuid, application_id uuid, session_id uuid, event_id bigint)
    ON CONFLICT (event_id, unit) DO NOTHING
    RETURNING session_id`);
}

/** Queues analysis of these revisions, in one statement; a queued analysis of an older revision is superseded. */
export async function queueAnalyses(tx: Tx, events: readonly SessionEvent[]): Promise<void> {
  if (!events.length) return;
  const records = sql.jsonb(
    events.map(({ session, row }) => ({
      session_id: session.id,
      organization_id: session.organization_id,
      event_id: row.id,
      revision: row.revision,
    })),
  );
  await tx.query(sql.prepared('pass_queue', unreadRows)`
    WITH x AS (SELECT * FROM jsonb_to_recordset(${records}) AS x(session_id uuid, organization_id uuid, event_id bigint, revision integer)),
    superseded AS (
      UPDATE agent_analysis_jobs j SET status = 'superseded', updated_at = now()
      FROM x WHERE j.event_id = x.event_id AND j.event_id = ANY(${sql.array(
        events.map((e) => e.row.id),
        'int8',
      )}) AND j.revision < x.revision AND j.status = 'queued'
    )
    INSERT INTO agent_analysis_jobs (session_id, organization_id, event_id, revision)
    SELECT x.session_id, x.organization_id, x.event_id, x.revision FROM x
    ON CONFLICT (event_id, revision) DO NOTHING`);
}

/**
 * Marks the processed revisions of the marked events (revised, or arrived late: ProcessRow's
 * `processed_revision` is set); the others need no write, the watermark passing them says it. A
 * revision committed since the pass read the event keeps it pending.
 */
export async function markEventsProcessed(tx: CommonQueryMethods, rows: readonly ProcessRow[]): Promise<void> {
  const marked = rows.filter((r) => r.processed_revision !== null);
  if (!marked.length) return;
  // By the session's key, not the event id alone: no index of the weekly partitions is on id (decision 0216).
  await tx.query(sql.prepared('pass_mark', unreadRows)`
    UPDATE agent_events e SET processed_revision = x.revision
    FROM unnest(${sql.array(
      marked.map((r) => r.session_id),
      'uuid',
    )}, ${sql.array(
      marked.map((r) => r.sequence),
      'int8',
    )}, ${sql.array(
      marked.map((r) => r.revision),
      'int4',
    )}) AS x(session_id, sequence, revision)
    WHERE e.session_id = x.session_id AND e.sequence = x.sequence`);
}

/**
 * Whether an event (`e`, of agent_events) is processed at its current revision, with its session
 * (`s`, of agent_sessions) joined: at or below the watermark, and not marked pending (decision 0210).
 */
export const processedEvent = sql.fragment`(e.sequence <= s.processed_through_sequence
  AND (e.processed_revision IS NULL OR e.processed_revision = e.revision))`;
