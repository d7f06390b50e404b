import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { StoredProgress } from '../../domain/agent-processing-plan.js';

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
  return (
    row && {
      status: row.status,
      processingStatus: row.processing_status,
      processedThroughSequence: row.processed_through_sequence,
      highestSequence: row.highest_sequence,
    }
  );
}

export const lockedSession = z.object({
  id: z.string(),
  organization_id: z.string(),
  application_id: z.string(),
  status: z.enum(['open', 'ended', 'abandoned']),
  processed_through_sequence: z.number().nullable(),
  highest_sequence: z.number().nullable(),
  /** The session's workflow was told that its analyses wait, and waits (see takeHoldSignalTurns). */
  hold_told: z.boolean(),
});
export type LockedSession = z.infer<typeof lockedSession>;

/**
 * The session's workflow knows that its analyses wait: a hold was told (`hold_signalled_at`) and
 * its signal was sent (`workflow_signalled_at`, cleared while a hold's signal is in flight).
 */
const holdTold = sql.fragment`(hold_signalled_at IS NOT NULL AND workflow_signalled_at IS NOT NULL)`;
const HOLD_TOLD = sql.fragment`${holdTold} AS hold_told`;

/**
 * Locks sessions for a pass (their ingests lock the same rows), in the order ingests lock several
 * sessions (application, external id: see lockSessions) so that two callers locking overlapping
 * sets never deadlock; deleted sessions are absent.
 */
export async function lockSessionRows(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<readonly LockedSession[]> {
  if (!sessionIds.length) return [];
  return tx.any(sql.type(lockedSession)`
    SELECT id, organization_id, application_id, status, processed_through_sequence, highest_sequence, ${HOLD_TOLD} FROM agent_sessions
    WHERE id = ANY(${sql.array([...sessionIds], 'uuid')}) ORDER BY application_id, external_session_id COLLATE "C" FOR UPDATE`);
}

/**
 * The drainer's claim: up to `limit` sessions whose wake is due, oldest request first, locked for
 * the transaction. Rows another transaction holds (an ingest, another drainer lane or replica) are
 * skipped, never waited for; `busy` are those this drainer is still working on between transactions.
 */
export async function claimDueSessions(tx: CommonQueryMethods, busy: readonly string[], limit: number): Promise<readonly LockedSession[]> {
  return tx.any(sql.type(lockedSession)`
    SELECT id, organization_id, application_id, status, processed_through_sequence, highest_sequence, ${HOLD_TOLD} FROM agent_sessions
    WHERE wake_requested_at <= now() AND NOT (id = ANY(${sql.array([...busy], 'uuid')}))
    ORDER BY wake_requested_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
}

const processRow = z.object({
  id: z.number(),
  session_id: z.string(),
  sequence: z.number(),
  revision: z.number(),
  type: z.enum(['user_message', 'assistant_message', 'feedback']),
  final: z.boolean().nullable(),
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

/** Each session's unprocessed events (new, or revised since processed), in sequence order, one page per session. */
export async function pendingRows(tx: CommonQueryMethods, sessionIds: readonly string[], limit: number): Promise<readonly ProcessRow[]> {
  if (!sessionIds.length) return [];
  return tx.any(sql.type(processRow)`
    SELECT p.* FROM unnest(${sql.array([...sessionIds], 'uuid')}) AS s(id) CROSS JOIN LATERAL (
      SELECT id, session_id, sequence, revision, type, final, payload IS NOT NULL AS has_content, payload->'feedback' AS feedback
      FROM agent_events
      WHERE session_id = s.id AND processed_revision IS DISTINCT FROM revision
      ORDER BY sequence LIMIT ${limit}) p`);
}

/** A processed event with the session it belongs to. */
export interface SessionEvent {
  session: LockedSession;
  row: ProcessRow;
}

/** Spec rule 5: a rated feedback event is an explicit signal, deterministic and free; a revision updates it. */
export async function upsertExplicitSignals(tx: CommonQueryMethods, rows: readonly SessionEvent[]): Promise<number> {
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
  if (!rated.length) return 0;
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
  await tx.query(sql.unsafe`
    INSERT INTO agent_signals (organization_id, session_id, event_id, event_external_id, source, kind, rating, labels, comment, event_revision, producer)
    SELECT x.organization_id, x.session_id, x.event_id, x.target, 'explicit_feedback', 'feedback', x.rating,
      ARRAY(SELECT jsonb_array_elements_text(x.labels)), x.comment, x.revision, 'explicit'
    FROM jsonb_to_recordset(${sql.jsonb(records)})
      AS x(organization_id uuid, session_id uuid, event_id bigint, target text, rating text, labels jsonb, comment text, revision integer)
    ON CONFLICT (event_id) WHERE source = 'explicit_feedback' DO UPDATE SET
      event_external_id = excluded.event_external_id, rating = excluded.rating, labels = excluded.labels,
      comment = excluded.comment, event_revision = excluded.event_revision`);
  return rated.length;
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
  return tx.anyFirst(sql.type(z.object({ session_id: z.string() }))`
    INSERT INTO usage_records (organization_id, application_id, session_id, event_id, unit, quantity)
    SELECT x.organization_id, x.application_id, x.session_id, x.event_id, 'agent_response_processed', 1
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(organization_id uuid, application_id uuid, session_id uuid, event_id bigint)
    ON CONFLICT (event_id, unit) DO NOTHING
    RETURNING session_id`);
}

/** Queues analysis of these revisions; a queued analysis of an older revision is superseded. */
export async function queueAnalyses(tx: CommonQueryMethods, events: readonly SessionEvent[]): Promise<number> {
  if (!events.length) return 0;
  const records = sql.jsonb(events.map(({ session, row }) => ({ session_id: session.id, event_id: row.id, revision: row.revision })));
  await tx.query(sql.unsafe`
    UPDATE agent_analysis_jobs j SET status = 'superseded', updated_at = now()
    FROM jsonb_to_recordset(${records}) AS x(session_id uuid, event_id bigint, revision integer)
    WHERE j.event_id = x.event_id AND j.event_id = ANY(${sql.array(
      events.map((e) => e.row.id),
      'int8',
    )})
      AND j.revision < x.revision AND j.status = 'queued'`);
  const inserted = await tx.any(sql.type(z.object({ id: z.number() }))`
    INSERT INTO agent_analysis_jobs (session_id, event_id, revision)
    SELECT x.session_id, x.event_id, x.revision FROM jsonb_to_recordset(${records}) AS x(session_id uuid, event_id bigint, revision integer)
    ON CONFLICT (event_id, revision) DO NOTHING
    RETURNING id`);
  return inserted.length;
}

/** What a pass leaves in one session: its new watermark, and whether its wake request is taken. */
export interface PassOutcome {
  sessionId: string;
  watermark: number | null;
  /** The pass found nothing more to process now: the session's wake request is taken (an ingest after it requests a new one). */
  settled: boolean;
}

/**
 * Marks events processed and advances the sessions' watermarks, taking the wake requests of the
 * settled ones; two statements for any number of sessions. Returns the sessions as stored, which
 * the workflow adopts (ingests within a pass do not signal it).
 */
export async function markProcessed(tx: CommonQueryMethods, eventIds: readonly number[], outcomes: readonly PassOutcome[]) {
  if (eventIds.length) {
    await tx.query(sql.unsafe`
      UPDATE agent_events SET processed_revision = revision WHERE id = ANY(${sql.array([...eventIds], 'int8')})`);
  }
  if (!outcomes.length) return new Map<string, { status: LockedSession['status']; highest_sequence: number | null }>();
  const records = outcomes.map((o) => ({ id: o.sessionId, watermark: o.watermark, settled: o.settled }));
  const rows = await tx.any(sql.type(
    z.object({ id: z.string(), status: z.enum(['open', 'ended', 'abandoned']), highest_sequence: z.number().nullable() }),
  )`
    UPDATE agent_sessions s SET processed_through_sequence = greatest(s.processed_through_sequence, x.watermark), updated_at = now(),
      wake_requested_at = CASE WHEN x.settled THEN NULL ELSE s.wake_requested_at END
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(id uuid, watermark bigint, settled boolean)
    WHERE s.id = x.id AND s.id = ANY(${sql.array(
      outcomes.map((o) => o.sessionId),
      'uuid',
    )})
    RETURNING s.id, s.status, s.highest_sequence`);
  return new Map(rows.map((r) => [r.id, { status: r.status, highest_sequence: r.highest_sequence }]));
}

const signalTarget = z.object({
  id: z.string(),
  organization_id: z.string(),
  status: z.enum(['open', 'ended', 'abandoned']),
  highest_sequence: z.number().nullable(),
  processing_status: z.string(),
  wake_trace_parent: z.string().nullable(),
});
export type SignalTarget = z.infer<typeof signalTarget>;

/**
 * The rows of these sessions that match `where`, locked in the order every multi-session lock
 * uses (see lockSessionRows), so that an update of several sessions never deadlocks with an
 * ingest batch or the drainer. The lock is the one an UPDATE of non-key columns takes (NO KEY), so
 * that inserts referencing the sessions (events, signals) do not wait for it.
 */
function inLockOrder(sessionIds: readonly string[], where: FragmentSqlToken) {
  return sql.fragment`(SELECT id FROM agent_sessions WHERE id = ANY(${sql.array([...sessionIds], 'uuid')}) AND ${where}
    ORDER BY application_id, external_session_id COLLATE "C" FOR NO KEY UPDATE)`;
}

/** Takes the turn to tell these sessions' workflows where it is `due`; the sessions not returned are not told this time. */
async function takeTurns(
  db: CommonQueryMethods,
  sessionIds: readonly string[],
  set: FragmentSqlToken,
  due: FragmentSqlToken,
): Promise<readonly SignalTarget[]> {
  if (!sessionIds.length) return [];
  return db.any(sql.type(signalTarget)`
    UPDATE agent_sessions s SET ${set}
    FROM ${inLockOrder(sessionIds, sql.fragment`(${due})`)} AS l
    WHERE s.id = l.id
    RETURNING s.id, s.organization_id, s.status, s.highest_sequence, s.processing_status, s.wake_trace_parent`);
}

/**
 * Routine signals: the workflows of sessions that ended (the workflow finishes its run) or were
 * not told for `everySeconds` (or ever). A process that dies before sending leaves it to the next
 * turn.
 */
export async function takeWorkflowSignalTurns(
  db: CommonQueryMethods,
  sessionIds: readonly string[],
  everySeconds: number,
): Promise<readonly SignalTarget[]> {
  return takeTurns(
    db,
    sessionIds,
    sql.fragment`workflow_signalled_at = now()`,
    sql.fragment`status <> 'open' OR workflow_signalled_at IS NULL OR workflow_signalled_at <= now() - ${everySeconds} * interval '1 second'`,
  );
}

/**
 * Hold signals (the sessions' analyses wait for credits or the provider): the workflows of
 * sessions that ended, and of those whose workflow does not know of a hold since the last round
 * that was not held. The others' workflows wait and look again by themselves. A hold counts as told
 * only once `confirmHoldSignals` records its signal as sent: until then (a process that died, a
 * signal that failed) the next pass runs the round and tells it again.
 */
export async function takeHoldSignalTurns(db: CommonQueryMethods, sessionIds: readonly string[]): Promise<readonly SignalTarget[]> {
  return takeTurns(
    db,
    sessionIds,
    sql.fragment`workflow_signalled_at = NULL, hold_signalled_at = now()`,
    sql.fragment`status <> 'open' OR NOT ${holdTold}`,
  );
}

/** The hold signals that were sent: the holds count as told (see takeHoldSignalTurns). */
export async function confirmHoldSignals(db: CommonQueryMethods, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  await db.query(sql.unsafe`
    UPDATE agent_sessions s SET workflow_signalled_at = now()
    FROM ${inLockOrder(sessionIds, sql.fragment`TRUE`)} AS l WHERE s.id = l.id`);
}

/**
 * Analysis rounds that were not held end the sessions' holds: the next round that is held tells
 * the workflow at once (its own wait for credits or the provider has ended too).
 */
export async function endHolds(db: CommonQueryMethods, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  await db.query(sql.unsafe`
    UPDATE agent_sessions s SET hold_signalled_at = NULL
    FROM ${inLockOrder(sessionIds, sql.fragment`hold_signalled_at IS NOT NULL`)} AS l WHERE s.id = l.id`);
}

/** Sessions whose drain failed are looked at again after `retrySeconds`, not in a tight loop. */
export async function deferWakes(db: CommonQueryMethods, sessionIds: readonly string[], retrySeconds: number): Promise<void> {
  if (!sessionIds.length) return;
  await db.query(sql.unsafe`
    UPDATE agent_sessions SET wake_requested_at = now() + ${retrySeconds} * interval '1 second'
    WHERE id = ANY(${sql.array([...sessionIds], 'uuid')}) AND wake_requested_at IS NOT NULL`);
}

/**
 * A signal that failed: the session is told at its next turn, and the drainer looks at it again
 * after `retrySeconds` (not before: Temporal may be down for a while), even with no ingest.
 */
export async function deferWorkflowSignal(db: CommonQueryMethods, sessionId: string, retrySeconds: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE agent_sessions SET workflow_signalled_at = NULL, hold_signalled_at = NULL, wake_requested_at = now() + ${retrySeconds} * interval '1 second'
    WHERE id = ${sessionId}`);
}
