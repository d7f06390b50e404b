import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { StoredProgress } from '../../../workflows/agent-session/contract.js';

/** The session workflow's reads and writes. Every write is idempotent (ON CONFLICT, state checks). */

const progressRow = z.object({
  status: z.enum(['open', 'ended', 'abandoned']),
  processing_status: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  processed_through_sequence: z.number().nullable(),
  highest_sequence: z.number().nullable(),
});

export async function loadProgress(db: CommonQueryMethods, sessionId: string): Promise<StoredProgress | null> {
  const row = await db.maybeOne(sql.type(progressRow)`
    SELECT status, processing_status, processed_through_sequence, highest_sequence FROM agent_sessions WHERE id = ${sessionId}`);
  return row && {
    status: row.status,
    processingStatus: row.processing_status,
    processedThroughSequence: row.processed_through_sequence,
    highestSequence: row.highest_sequence,
  };
}

export const lockedSession = z.object({
  id: z.string(),
  organization_id: z.string(),
  application_id: z.string(),
  status: z.enum(['open', 'ended', 'abandoned']),
  processed_through_sequence: z.number().nullable(),
  highest_sequence: z.number().nullable(),
});
export type LockedSession = z.infer<typeof lockedSession>;

/** Serializes the workflow's writes with ingests of the same session (the ingest locks this row too). */
export async function lockSessionRow(tx: CommonQueryMethods, sessionId: string) {
  return tx.maybeOne(sql.type(lockedSession)`
    SELECT id, organization_id, application_id, status, processed_through_sequence, highest_sequence FROM agent_sessions WHERE id = ${sessionId} FOR UPDATE`);
}

const processRow = z.object({
  id: z.number(),
  sequence: z.number(),
  revision: z.number(),
  type: z.enum(['user_message', 'assistant_message', 'feedback']),
  final: z.boolean().nullable(),
  has_content: z.boolean(),
  feedback: z.object({
    targetEventExternalId: z.string(),
    rating: z.enum(['positive', 'negative']).optional(),
    labels: z.array(z.string()).optional(),
    comment: z.string().optional(),
  }).nullable(),
});
export type ProcessRow = z.infer<typeof processRow>;

/** The session's unprocessed events (new, or revised since processed), in sequence order, one page. */
export async function pendingRows(tx: CommonQueryMethods, sessionId: string, limit: number): Promise<readonly ProcessRow[]> {
  return tx.any(sql.type(processRow)`
    SELECT id, sequence, revision, type, final, payload IS NOT NULL AS has_content, payload->'feedback' AS feedback
    FROM agent_events
    WHERE session_id = ${sessionId} AND processed_revision IS DISTINCT FROM revision
    ORDER BY sequence LIMIT ${limit}`);
}

type Session = z.infer<typeof lockedSession>;

/** Spec rule 5: a rated feedback event is an explicit signal, deterministic and free; a revision updates it. */
export async function upsertExplicitSignals(tx: CommonQueryMethods, s: Session, rows: readonly ProcessRow[]): Promise<number> {
  const rated = rows.filter((r) => r.feedback?.rating);
  const unrated = rows.filter((r) => r.type === 'feedback' && !r.feedback?.rating);
  if (unrated.length) {
    await tx.query(sql.unsafe`
      DELETE FROM agent_signals WHERE source = 'explicit_feedback' AND event_id = ANY(${sql.array(unrated.map((r) => r.id), 'int8')})`);
  }
  if (!rated.length) return 0;
  const records = rated.map((r) => ({
    event_id: r.id, target: r.feedback!.targetEventExternalId, rating: r.feedback!.rating!, labels: r.feedback!.labels ?? [],
    comment: r.feedback!.comment ?? null, revision: r.revision,
  }));
  await tx.query(sql.unsafe`
    INSERT INTO agent_signals (organization_id, session_id, event_id, event_external_id, source, kind, rating, labels, comment, event_revision, producer)
    SELECT ${s.organization_id}, ${s.id}, x.event_id, x.target, 'explicit_feedback', 'feedback', x.rating,
      ARRAY(SELECT jsonb_array_elements_text(x.labels)), x.comment, x.revision, 'explicit'
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(event_id bigint, target text, rating text, labels jsonb, comment text, revision integer)
    ON CONFLICT (event_id) WHERE source = 'explicit_feedback' DO UPDATE SET
      event_external_id = excluded.event_external_id, rating = excluded.rating, labels = excluded.labels,
      comment = excluded.comment, event_revision = excluded.event_revision`);
  return rated.length;
}

/** Metering: one `agent_response_processed` unit per finalized assistant response, ever. */
export async function meterResponses(tx: CommonQueryMethods, s: Session, eventIds: readonly number[]): Promise<number> {
  if (!eventIds.length) return 0;
  const inserted = await tx.any(sql.type(z.object({ id: z.number() }))`
    INSERT INTO usage_records (organization_id, application_id, session_id, event_id, unit, quantity)
    SELECT ${s.organization_id}, ${s.application_id}, ${s.id}, unnest(${sql.array([...eventIds], 'int8')}), 'agent_response_processed', 1
    ON CONFLICT (event_id, unit) DO NOTHING
    RETURNING id`);
  return inserted.length;
}

/** Queues analysis of these revisions; a queued analysis of an older revision is superseded. */
export async function queueAnalyses(tx: CommonQueryMethods, sessionId: string, events: readonly { id: number; revision: number }[]): Promise<number> {
  if (!events.length) return 0;
  const records = sql.jsonb(events.map((e) => ({ event_id: e.id, revision: e.revision })));
  await tx.query(sql.unsafe`
    UPDATE agent_analysis_jobs j SET status = 'superseded', updated_at = now()
    FROM jsonb_to_recordset(${records}) AS x(event_id bigint, revision integer)
    WHERE j.event_id = x.event_id AND j.revision < x.revision AND j.status = 'queued'`);
  const inserted = await tx.any(sql.type(z.object({ id: z.number() }))`
    INSERT INTO agent_analysis_jobs (session_id, event_id, revision)
    SELECT ${sessionId}, x.event_id, x.revision FROM jsonb_to_recordset(${records}) AS x(event_id bigint, revision integer)
    ON CONFLICT (event_id, revision) DO NOTHING
    RETURNING id`);
  return inserted.length;
}

/**
 * Marks events processed and advances the watermark. `settled`: the pass found nothing more it may
 * process now, so the session's wake request is taken (the next ingest with work signals again).
 * Returns the session as stored, which the workflow adopts (ingests within a pass do not signal).
 */
export async function markProcessed(tx: CommonQueryMethods, sessionId: string, eventIds: readonly number[], watermark: number | null, settled: boolean) {
  if (eventIds.length) {
    await tx.query(sql.unsafe`
      UPDATE agent_events SET processed_revision = revision WHERE id = ANY(${sql.array([...eventIds], 'int8')})`);
  }
  return tx.one(sql.type(z.object({ status: z.enum(['open', 'ended', 'abandoned']), highest_sequence: z.number().nullable() }))`
    UPDATE agent_sessions SET processed_through_sequence = greatest(processed_through_sequence, ${watermark}::bigint), updated_at = now(),
      wake_requested_at = CASE WHEN ${settled} THEN NULL ELSE wake_requested_at END
    WHERE id = ${sessionId}
    RETURNING status, highest_sequence`);
}

const signalTarget = z.object({
  organization_id: z.string(),
  status: z.enum(['open', 'ended', 'abandoned']),
  highest_sequence: z.number().nullable(),
  processing_status: z.string(),
});

/**
 * Whether the drainer tells the session's workflow now: always when `force` or when the session
 * has ended (the workflow finishes its run), else when it has not been told for `everySeconds` (or
 * ever). Taking the turn records it; null: not this time.
 */
export async function takeWorkflowSignalTurn(db: CommonQueryMethods, sessionId: string, everySeconds: number, force: boolean) {
  return db.maybeOne(sql.type(signalTarget)`
    UPDATE agent_sessions SET workflow_signalled_at = now()
    WHERE id = ${sessionId}
      AND (${force} OR status <> 'open' OR workflow_signalled_at IS NULL OR workflow_signalled_at <= now() - ${everySeconds} * interval '1 second')
    RETURNING organization_id, status, highest_sequence, processing_status`);
}

/** A session whose drain failed is looked at again after `retrySeconds`, not in a tight loop. */
export async function deferWake(db: CommonQueryMethods, sessionId: string, retrySeconds: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE agent_sessions SET wake_requested_at = now() + ${retrySeconds} * interval '1 second'
    WHERE id = ${sessionId} AND wake_requested_at IS NOT NULL`);
}

/**
 * A signal that failed: the session is told at its next turn, and the drainer looks at it again
 * after `retrySeconds` (not before: Temporal may be down for a while), even with no ingest.
 */
export async function deferWorkflowSignal(db: CommonQueryMethods, sessionId: string, retrySeconds: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE agent_sessions SET workflow_signalled_at = NULL, wake_requested_at = now() + ${retrySeconds} * interval '1 second'
    WHERE id = ${sessionId}`);
}
