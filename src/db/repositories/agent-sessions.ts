import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { EventState, IncomingEvent } from '../../domain/agent-events.js';
import { toUtcInstant } from '../../domain/time.js';
import {
  BILLING_MANAGED,
  processingStatusAfterAnalysis,
  type ProcessingStatus,
  type StatusChange,
  type StoredProcessingStatus,
} from '../../domain/agent-session-state.js';
import { unreadRows, type Tx } from '../pool.js';
import { authorityStamp } from './agent-applications.js';
import { contains, erasedIdentifier, scrubbedJson, type Needle, type ScrubTarget } from './text-scrub.js';

/**
 * The only writer of `agent_sessions` (issue 30, point 5): its rows, the processing status and
 * the wake/hold protocol's columns, as src/agents/session-state.ts decides them (who sets and who
 * clears each column is listed there, PROTOCOL_COLUMNS).
 */

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

/** sessionRow's columns of `s`, listed: a prepared statement's result type does not change when a migration adds one (see src/db/pool.ts). */
const SESSION_COLUMNS = sql.join(
  Object.keys(sessionRow.shape).map((column) => sql.identifier(['s', column])),
  sql.fragment`, `,
);

export interface SessionKey {
  organizationId: string;
  applicationId: string;
  externalSessionId: string;
  restrictedTo: readonly string[] | null;
}

/**
 * A locked session, whether this transaction created it, its request's authority now (see
 * authorityStamp) and its organization's credit balance (the ingest decides the processing status).
 */
export type LockedSessionRow = SessionRow & { created: boolean; stamp: string | null; credit_balance: number };

/** A session's identity within an organization's ingest: its application's external session id. */
export function sessionKey(applicationId: string, externalSessionId: string): string {
  return `${applicationId}\u0000${externalSessionId}`;
}

/**
 * Creates each session on first sight and locks its row for the rest of the transaction: requests
 * for one session are serialized here, so that concurrent retries deduplicate instead of racing.
 * The sessions that exist are locked (FOR NO KEY UPDATE, writing no row version: the ingest's one
 * update of the row comes later), in (application, external id) order, the order every caller that
 * locks several sessions and waits uses; the others are inserted in that order, and one inserted
 * meanwhile by another transaction is locked in a further round. Nothing is changed for a request
 * refused after this. Each row carries its request's authority as it is now, which the ingest
 * compares with the lookup it was prepared from.
 */
export async function lockSessions(tx: CommonQueryMethods, keys: readonly SessionKey[]): Promise<readonly LockedSessionRow[]> {
  const locked = new Map<string, LockedSessionRow>();
  let wanted = [...keys];
  for (let round = 0; wanted.length > 0; round++) {
    if (round > 3) throw new Error('could not lock the sessions: created and deleted concurrently again and again');
    for (const row of await lockExisting(tx, wanted)) locked.set(sessionKey(row.application_id, row.external_session_id), row);
    const missing = wanted.filter((k) => !locked.has(sessionKey(k.applicationId, k.externalSessionId)));
    for (const row of await insertMissing(tx, missing)) locked.set(sessionKey(row.application_id, row.external_session_id), row);
    // Inserted by a transaction that committed after the lock's read: locked in the next round.
    wanted = missing.filter((k) => !locked.has(sessionKey(k.applicationId, k.externalSessionId)));
  }
  return keys.map((k) => locked.get(sessionKey(k.applicationId, k.externalSessionId))!);
}

const lockedSessionRow = sessionRow.extend({ created: z.boolean(), stamp: z.string().nullable(), credit_balance: z.number() });

/** The request's authority now and the organization's balance, beside a session row `s`. */
const sessionAuthority = sql.fragment`(
      SELECT ${authorityStamp} FROM agent_applications a JOIN organizations o ON o.id = a.organization_id WHERE a.id = s.application_id
    ) AS stamp, (SELECT credit_balance FROM organizations o WHERE o.id = s.organization_id) AS credit_balance`;

function keyRecords(keys: readonly SessionKey[]) {
  return sql.jsonb(
    keys.map((k) => ({
      organization_id: k.organizationId,
      application_id: k.applicationId,
      external_session_id: k.externalSessionId,
      restricted_to: k.restrictedTo,
    })),
  );
}

async function lockExisting(tx: CommonQueryMethods, keys: readonly SessionKey[]): Promise<readonly LockedSessionRow[]> {
  if (!keys.length) return [];
  return tx.any(sql.prepared('ingest_lock_sessions', lockedSessionRow)`
    SELECT ${SESSION_COLUMNS}, false AS created, ${sessionAuthority}
    FROM agent_sessions s
    JOIN jsonb_to_recordset(${keyRecords(keys)}) AS x(application_id uuid, external_session_id text)
      ON s.application_id = x.application_id AND s.external_session_id = x.external_session_id
    ORDER BY s.application_id, s.external_session_id COLLATE "C"
    FOR NO KEY UPDATE OF s`);
}

async function insertMissing(tx: CommonQueryMethods, keys: readonly SessionKey[]): Promise<readonly LockedSessionRow[]> {
  if (!keys.length) return [];
  return tx.any(sql.type(lockedSessionRow)`
    INSERT INTO agent_sessions AS s (organization_id, application_id, external_session_id, restricted_to)
    SELECT x.organization_id, x.application_id, x.external_session_id, x.restricted_to
    FROM jsonb_to_recordset(${keyRecords(keys)}) AS x(organization_id uuid, application_id uuid, external_session_id text, restricted_to uuid[])
    ORDER BY x.application_id, x.external_session_id COLLATE "C"
    ON CONFLICT (application_id, external_session_id) DO NOTHING
    RETURNING ${SESSION_COLUMNS}, true AS created, ${sessionAuthority}`);
}

/**
 * Deletes these conversations: events, revisions, participants, analyses and signals go with them
 * (their foreign keys cascade); metered usage stays, its session id cleared. For sessions an ingest
 * created and then refused (in the same transaction, so nothing is stored), a delete (issue 32) and
 * the retention sweep.
 */
export async function deleteSessions(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  await tx.query(sql.unsafe`DELETE FROM agent_sessions WHERE id = ANY(${sql.array([...sessionIds], 'uuid')})`);
}

/** The sessions' signals, analysis jobs, revision history and participants (a purge, and a partition's drop before it). */
export async function deleteSessionsDerivedRows(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  const ids = sql.array([...sessionIds], 'uuid');
  await tx.query(sql.unsafe`DELETE FROM agent_signals WHERE session_id = ANY(${ids})`);
  await tx.query(sql.unsafe`DELETE FROM agent_analysis_jobs WHERE session_id = ANY(${ids})`);
  await tx.query(sql.unsafe`DELETE FROM agent_event_revisions WHERE session_id = ANY(${ids})`);
  await tx.query(sql.unsafe`DELETE FROM agent_participants WHERE session_id = ANY(${ids})`);
}

/**
 * Content capture off (spec): only counts and status are kept. Deletes the session's content,
 * participants, revision history, jobs and signals; event rows keep sequence, type, revision and
 * the hash that deduplicates retries.
 */
export async function purgeSessionContent(tx: Tx, sessionId: string): Promise<void> {
  await deleteSessionsDerivedRows(tx, [sessionId]);
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
  const rows = await tx.any(sql.prepared('ingest_event_states', stateRow.extend({ session_id: z.string() }))`
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
export async function reviseEvents(
  tx: Tx,
  session: { id: string; organization_id: string },
  events: readonly IncomingEvent[],
  captureContent: boolean,
) {
  if (events.length === 0) return;
  const sessionId = session.id;
  const ids = sql.array(
    events.map((e) => e.externalEventId),
    'text',
  );
  await tx.query(sql.unsafe`
    INSERT INTO agent_event_revisions (event_id, session_id, organization_id, revision, final, content_hash, payload)
    SELECT id, session_id, ${session.organization_id}, revision, final, content_hash, payload FROM agent_events
    WHERE session_id = ${sessionId} AND external_event_id = ANY(${ids})
    ON CONFLICT (event_id, revision) DO NOTHING`);
  await tx.query(sql.unsafe`
    UPDATE agent_events e SET revision = x.revision, final = x.final, content_hash = decode(x.content_hash, 'hex'),
      payload = x.payload, updated_at = now(), processed_revision = coalesce(e.processed_revision, e.revision)
    FROM jsonb_to_recordset(${sql.jsonb(eventRecords(events, captureContent))})
      AS x(external_event_id text, revision integer, final boolean, content_hash text, payload jsonb)
    WHERE e.session_id = ${sessionId} AND e.external_event_id = x.external_event_id`);
}

export interface SessionUpdate {
  sessionId: string;
  /** The session's organization, written on its events (decision 0216). */
  organizationId: string;
  status: 'open' | 'ended' | 'abandoned';
  /** Whether the event content is stored. */
  captureContent: boolean;
  /** As processingStatusAfterIngest decides it. */
  processingStatus: ProcessingStatus;
  agentVersion: string | null;
  source: unknown;
  context: unknown;
  /** The accepted new events, inserted by the same statement. */
  newEvents: readonly IncomingEvent[];
  highestSequence: number | null;
  /**
   * The ingest gave the workflow work (new or revised events, a status change): request a wake, due
   * now (one deferred to later, a routine signal's slot or a failed drain's retry, is brought forward).
   */
  wake: boolean;
  /** The ingest's W3C traceparent (tracing on): kept with the wake it requests (the first ingest's, while one is due). */
  traceParent: string | null;
}

/**
 * Inserts the accepted new events and updates the sessions (status, processing status, counts,
 * highest sequence, the wake request) in one statement for any number of sessions (distinct).
 */
export async function updateSessionsAfterIngest(tx: CommonQueryMethods, updates: readonly SessionUpdate[]): Promise<readonly SessionRow[]> {
  if (!updates.length) return [];
  const events = updates.flatMap((u) =>
    eventRecords(u.newEvents, u.captureContent).map((e) => ({ session_id: u.sessionId, organization_id: u.organizationId, ...e })),
  );
  const sessions = updates.map((u) => ({
    id: u.sessionId,
    status: u.status,
    processing_status: u.processingStatus,
    agent_version: u.agentVersion,
    source: u.source ?? null,
    context: u.context ?? null,
    highest_sequence: u.highestSequence,
    wake: u.wake,
    trace_parent: u.traceParent,
  }));
  return tx.any(sql.prepared('ingest_write', sessionRow)`
    WITH inserted AS (
      INSERT INTO agent_events (session_id, organization_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
      SELECT x.session_id, x.organization_id, x.external_event_id, x.sequence, x.revision, x.type, x.occurred_at, x.final, decode(x.content_hash, 'hex'), x.payload
      FROM jsonb_to_recordset(${sql.jsonb(events)})
        AS x(session_id uuid, organization_id uuid, external_event_id text, sequence bigint, revision integer, type text, occurred_at timestamptz, final boolean, content_hash text, payload jsonb)
      RETURNING session_id
    ), counts AS (SELECT session_id, count(*) AS n FROM inserted GROUP BY session_id)
    UPDATE agent_sessions s SET
      status = u.status,
      ended_at = CASE WHEN u.status <> 'open' THEN coalesce(s.ended_at, now()) ELSE s.ended_at END,
      processing_status = u.processing_status,
      agent_version = coalesce(u.agent_version, s.agent_version),
      source = coalesce(u.source, s.source),
      context = coalesce(u.context, s.context),
      event_count = s.event_count + coalesce((SELECT n FROM counts c WHERE c.session_id = s.id), 0),
      highest_sequence = greatest(s.highest_sequence, u.highest_sequence),
      wake_requested_at = CASE WHEN u.wake THEN least(s.wake_requested_at, now()) ELSE s.wake_requested_at END,
      wake_seq = s.wake_seq + CASE WHEN u.wake THEN 1 ELSE 0 END,
      wake_trace_parent = CASE WHEN u.wake AND (s.wake_requested_at IS NULL OR s.wake_requested_at > now()) THEN u.trace_parent ELSE s.wake_trace_parent END,
      last_ingest_at = now(), updated_at = now()
    FROM jsonb_to_recordset(${sql.jsonb(sessions as never)})
      AS u(id uuid, status text, processing_status text, agent_version text, source jsonb, context jsonb, highest_sequence bigint, wake boolean, trace_parent text)
    WHERE s.id = u.id AND s.id = ANY(${sql.array(
      updates.map((u) => u.sessionId),
      'uuid',
    )})
    RETURNING ${SESSION_COLUMNS}`);
}

/**
 * The channel an ingest notifies in the transaction that requests a session's wake (at most every
 * few milliseconds per API process): the workers' idle drainers listen on it (decision 0210).
 */
export const SESSION_WAKE_CHANNEL = 'intake_session_wakes';

/** Notifies SESSION_WAKE_CHANNEL when the transaction commits. */
export async function notifySessionWakes(tx: CommonQueryMethods): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_notify(${SESSION_WAKE_CHANNEL}, '')`);
}

/** A session a wake targets: what its workflow start needs. */
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
 * Sessions whose wake was requested more than `olderThanSeconds` ago and never taken (the signal
 * was lost or Temporal was unreachable): the reconciler wakes them. Oldest first.
 */
export async function strandedWakes(db: CommonQueryMethods, olderThanSeconds: number, limit: number) {
  return db.any(sql.type(signalTarget)`
    SELECT id, organization_id, status, highest_sequence, processing_status, wake_trace_parent FROM agent_sessions
    WHERE wake_requested_at < now() - ${olderThanSeconds} * interval '1 second'
    ORDER BY wake_requested_at LIMIT ${limit}`);
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
  /** The wake's generation when the pass read the session (migration 0034): it takes the wake only if unchanged. */
  wake_seq: z.number(),
  /** Its analyses queued when the pass read it (read with the session: one statement fewer per pass). */
  queued: z.number(),
});
export type LockedSession = z.infer<typeof lockedSession>;

/**
 * The session's workflow knows that its analyses wait: a hold was told (`hold_signalled_at`) and
 * its signal was sent (`workflow_signalled_at`, cleared while a hold's signal is in flight).
 */
const holdTold = sql.fragment`(hold_signalled_at IS NOT NULL AND workflow_signalled_at IS NOT NULL)`;
const HOLD_TOLD = sql.fragment`${holdTold} AS hold_told`;

/**
 * Locks these session rows for the transaction in the order every multi-session lock uses (see
 * lockSessions), ordering a write after an ingest in flight (a purge, a revision) and every later
 * ingest after it; deleted sessions are absent. Analysis rounds take them before their jobs.
 * `skipLocked`: a row locked elsewhere (an ingest in flight) is left out too, not waited for.
 */
export async function lockSessionRows(
  tx: CommonQueryMethods,
  sessionIds: readonly string[],
  o: { skipLocked?: boolean } = {},
): Promise<readonly string[]> {
  if (!sessionIds.length) return [];
  return tx.anyFirst(
    sql.prepared('sessions_lock_rows', z.object({ id: z.string() }))`SELECT id FROM ${inLockOrder(sessionIds, sql.fragment`TRUE`, o)} AS l`,
  );
}

/** What a pass reads of a session `s` when it takes it (no row lock: ingests go on meanwhile). */
const PASS_COLUMNS = sql.fragment`id, organization_id, application_id, status, processed_through_sequence, highest_sequence, ${HOLD_TOLD}, wake_seq,
  (SELECT count(*) FROM agent_analysis_jobs j WHERE j.session_id = s.id AND j.status = 'queued')::int AS queued`;

/**
 * A session's pass lock (decision 0210): a transaction-scoped advisory lock that orders the passes
 * and analysis rounds of one session (drainer lanes, the session's workflow, a replica during a
 * rolling upgrade) without touching the session's row, which its ingests lock.
 */
const passLockKey = (id: FragmentSqlToken) => sql.fragment`hashtextextended('agent-session-pass:' || ${id}::text, 0)`;

/**
 * Takes these sessions' pass locks for the transaction, waiting for a pass or analysis round that
 * holds one (in id order, so that two callers never deadlock), and reads them; deleted sessions are
 * absent. The session rows are not locked: an ingest is never held up by a pass.
 */
export async function takeSessionsForPass(tx: CommonQueryMethods, sessionIds: readonly string[]): Promise<readonly LockedSession[]> {
  if (!sessionIds.length) return [];
  const ids = [...new Set(sessionIds)].sort();
  await tx.query(sql.prepared('pass_lock', unreadRows)`
    SELECT pg_advisory_xact_lock(${passLockKey(sql.fragment`x.id`)}) FROM unnest(${sql.array(ids, 'uuid')}) WITH ORDINALITY AS x(id, n) ORDER BY x.n`);
  return tx.any(sql.prepared('pass_take', lockedSession)`
    SELECT ${PASS_COLUMNS} FROM agent_sessions s WHERE id = ANY(${sql.array(ids, 'uuid')})`);
}

/** One of a task queue's session drainer shards: it drains the sessions of bucket `index` of `count`. */
export interface DrainShard {
  index: number;
  count: number;
}

/** A session's bucket of `count`: its id's last two bytes (ids are random), modulo the count. */
const shardOf = (count: number) => sql.fragment`mod(get_byte(uuid_send(id), 14) * 256 + get_byte(uuid_send(id), 15), ${count})`;

/** A session of the shard whose wake is due, beside `busy` (those the drainer is working on). */
function dueIn(shard: DrainShard, busy: readonly string[]) {
  const inShard = shard.count === 1 ? sql.fragment`TRUE` : sql.fragment`${shardOf(shard.count)} = ${shard.index}`;
  return sql.fragment`wake_requested_at <= now() AND ${inShard} AND NOT (id = ANY(${sql.array([...busy], 'uuid')}))`;
}

/**
 * Whether a session of the shard is still due beside `busy`: the drainer asks when its claim took
 * nothing, before it waits for a wake. Such a session is held by another pass (a worker handing the
 * shard over, the session's workflow) or was left because its ingest was in flight; no
 * notification may come for it.
 */
export async function anySessionDue(db: CommonQueryMethods, shard: DrainShard, busy: readonly string[]): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ due: z.boolean() }))`
    SELECT EXISTS (SELECT 1 FROM agent_sessions WHERE ${dueIn(shard, busy)}) AS due`);
}

/**
 * The drainer's claim: up to `limit` sessions of the shard whose wake is due, oldest request first,
 * each with its pass lock (takeSessionsForPass) for the transaction. Sessions another pass holds
 * (another drainer lane or replica, the session's workflow) are skipped, never waited for; `busy`
 * are those this drainer is still working on between transactions. No row is locked.
 */
export async function claimDueSessions(
  tx: CommonQueryMethods,
  shard: DrainShard,
  busy: readonly string[],
  limit: number,
): Promise<readonly LockedSession[]> {
  // The lock is tried on the due sessions taken in order (OFFSET 0 keeps the LIMIT below the try),
  // twice as many as wanted: a few held elsewhere do not leave the batch short.
  return tx.any(sql.prepared('drain_claim', lockedSession)`
    SELECT ${PASS_COLUMNS} FROM (
      SELECT * FROM agent_sessions
      WHERE ${dueIn(shard, busy)}
      ORDER BY wake_requested_at LIMIT ${limit * 2} OFFSET 0) s
    WHERE pg_try_advisory_xact_lock(${passLockKey(sql.fragment`s.id`)})
    LIMIT ${limit}`);
}

/** The shard of each session (tests and operators: which drainer takes a session). */
export async function sessionShards(db: CommonQueryMethods, sessionIds: readonly string[], count: number): Promise<Map<string, number>> {
  const rows = await db.any(sql.type(z.object({ id: z.string(), shard: z.number() }))`
    SELECT id, ${shardOf(count)}::int AS shard FROM agent_sessions WHERE id = ANY(${sql.array([...sessionIds], 'uuid')})`);
  return new Map(rows.map((r) => [r.id, r.shard]));
}

/** What a pass leaves in one session: its new watermark, and whether its wake request is taken. */
export interface PassOutcome {
  sessionId: string;
  watermark: number | null;
  /** The pass found nothing more to process now: the session's wake request is taken (an ingest after it requests a new one). */
  settled: boolean;
  /** The wake's generation the pass read (LockedSession.wake_seq). */
  wakeSeq: number;
}

/** A session as a pass leaves it; `turn`: the pass took its workflow's routine turn (see advanceSessions). */
const advancedRow = signalTarget.extend({ turn: z.boolean() });
export type AdvancedSession = z.infer<typeof advancedRow>;

/**
 * Routine signals: the workflows of sessions that ended (the workflow finishes its run) or were
 * not told for `everySeconds` (or ever). A process that dies before sending leaves it to the next
 * turn.
 */
const routineTurnDue = (everySeconds: number) =>
  sql.fragment`status <> 'open' OR workflow_signalled_at IS NULL OR workflow_signalled_at <= now() - ${everySeconds} * interval '1 second'`;

/**
 * Advances the sessions' watermarks after a pass, taking the wake requests of the settled ones
 * whose wake no ingest requested again since the pass read them (`wake_seq` unchanged); one
 * statement for any number of sessions, which locks their rows in the order every multi-session
 * lock uses (a pass's first write, which holds the rows until its commit). `skipLocked` (the
 * drainer): a session whose ingest is in flight is left out, its wake kept, rather than waited for.
 * `routineTurnEverySeconds` (the drainer): a settled session whose workflow is due a routine signal
 * (routineTurnDue) has its turn taken in the same statement (`turn`), one statement fewer
 * per pass; the caller sends it after the commit. Returns the sessions as stored (deleted and
 * skipped ones are absent), which the workflow adopts.
 */
export async function advanceSessions(
  tx: CommonQueryMethods,
  outcomes: readonly PassOutcome[],
  o: { skipLocked?: boolean; routineTurnEverySeconds?: number } = {},
): Promise<Map<string, AdvancedSession>> {
  if (!outcomes.length) return new Map();
  const records = outcomes.map((x) => ({ id: x.sessionId, watermark: x.watermark, settled: x.settled, wake_seq: x.wakeSeq }));
  const due = o.routineTurnEverySeconds === undefined ? sql.fragment`FALSE` : routineTurnDue(o.routineTurnEverySeconds);
  const rows = await tx.any(sql.prepared('pass_advance', advancedRow)`
    UPDATE agent_sessions s SET processed_through_sequence = greatest(s.processed_through_sequence, x.watermark), updated_at = now(),
      wake_requested_at = CASE WHEN x.settled AND s.wake_seq = x.wake_seq THEN NULL ELSE s.wake_requested_at END,
      workflow_signalled_at = CASE WHEN x.settled AND l.due THEN now() ELSE s.workflow_signalled_at END
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(id uuid, watermark bigint, settled boolean, wake_seq bigint),
      ${inLockOrder(
        outcomes.map((x) => x.sessionId),
        sql.fragment`TRUE`,
        { ...o, columns: sql.fragment`(${due}) AS due` },
      )} AS l
    WHERE s.id = x.id AND l.id = s.id
    RETURNING s.id, s.organization_id, s.status, s.highest_sequence, s.processing_status, s.wake_trace_parent, x.settled AND l.due AS turn`);
  return new Map(rows.map((r) => [r.id, r]));
}

const settledRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  application_id: z.string(),
  before: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  processing_status: z.enum(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled']),
  remaining: z.number(),
  settled: z.boolean(),
  turn: z.boolean(),
  status: z.enum(['open', 'ended', 'abandoned']),
  highest_sequence: z.number().nullable(),
  wake_trace_parent: z.string().nullable(),
});

/** An analysis round's outcome for one session (settleAnalysisRound). */
export interface RoundOutcome {
  sessionId: string;
  /** Analyses the balance could not pay: the session is billing-blocked. */
  blocked: boolean;
  /** The round was not held (neither by credits nor by the provider): the session's hold ends (see takeHoldSignalTurns). */
  endHold: boolean;
  /**
   * The drainer's rounds: the wake's generation its pass read (PassOutcome.wakeSeq). A round that
   * was not held and leaves no analysis queued takes the wake, as that pass would have, if no ingest
   * requested it again since: the pass that would follow only to take it is saved.
   */
  wakeSeq?: number;
}

/**
 * An analysis round's end, in one statement for its sessions (decision 0210: it was four): the
 * billing verdict moves sessions between `pending` and `billing_blocked` (from BILLING_MANAGED
 * statuses only: `capture_disabled` is the ingest's to set and clear); a round that was not held
 * ends the session's hold; a session whose analysis queue the round emptied moves (`updated_at`, a
 * shown column: its reported status turns `completed` and incremental sync reports it). A row is
 * written only when one of these changes it. The rows are locked in the order every multi-session
 * lock uses, so the status read is the one replaced. Returns the stored statuses and the analyses
 * still queued (deleted sessions are absent) and the changes made, from which the caller records
 * the billing events in the same transaction.
 */
export async function settleAnalysisRound(
  tx: Tx,
  outcomes: readonly RoundOutcome[],
  o: { routineTurnEverySeconds?: number } = {},
): Promise<{
  statuses: Map<string, StoredProcessingStatus>;
  remaining: Map<string, number>;
  changes: StatusChange[];
  /** The sessions whose wake the round took (RoundOutcome.wakeSeq). */
  settled: Set<string>;
  /** Their workflows' routine signal turns, taken with the wake as a pass takes them (advanceSessions): the caller sends them. */
  turns: SignalTarget[];
}> {
  if (!outcomes.length) return { statuses: new Map(), remaining: new Map(), changes: [], settled: new Set(), turns: [] };
  const records = outcomes.map((x) => ({
    id: x.sessionId,
    target: processingStatusAfterAnalysis(x.blocked),
    end_hold: x.endHold,
    wake_seq: x.wakeSeq ?? null,
  }));
  const managed = sql.array([...BILLING_MANAGED], 'text');
  const due = o.routineTurnEverySeconds === undefined ? sql.fragment`FALSE` : routineTurnDue(o.routineTurnEverySeconds);
  const rows = await tx.any(sql.prepared('round_settle', settledRow)`
    WITH x AS (SELECT * FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(id uuid, target text, end_hold boolean, wake_seq bigint)),
    l AS ${inLockOrder(
      outcomes.map((x) => x.sessionId),
      sql.fragment`TRUE`,
      {
        columns: sql.fragment`organization_id, application_id, processing_status AS before, hold_signalled_at IS NOT NULL AS held,
          (SELECT count(*) FROM agent_analysis_jobs j WHERE j.session_id = agent_sessions.id AND j.status = 'queued')::int AS remaining,
          wake_seq AS wake_seq_now, wake_requested_at IS NOT NULL AS waking, (${due}) AS due`,
      },
    )},
    v AS (
      SELECT l.*, x.target, x.end_hold, l.before = ANY(${managed}) AND l.before <> x.target AS moves,
        x.wake_seq IS NOT NULL AND x.end_hold AND l.remaining = 0 AND l.waking AND l.wake_seq_now = x.wake_seq AS settles
      FROM l JOIN x ON x.id = l.id),
    u AS (
      UPDATE agent_sessions s SET
        processing_status = CASE WHEN v.moves THEN v.target ELSE s.processing_status END,
        hold_signalled_at = CASE WHEN v.end_hold THEN NULL ELSE s.hold_signalled_at END,
        updated_at = CASE WHEN v.moves OR v.remaining = 0 THEN now() ELSE s.updated_at END,
        wake_requested_at = CASE WHEN v.settles THEN NULL ELSE s.wake_requested_at END,
        workflow_signalled_at = CASE WHEN v.settles AND v.due THEN now() ELSE s.workflow_signalled_at END
      FROM v WHERE s.id = v.id AND (v.moves OR v.remaining = 0 OR (v.end_hold AND v.held))
      RETURNING s.id, s.processing_status, s.status, s.highest_sequence, s.wake_trace_parent)
    SELECT v.id, v.organization_id, v.application_id, v.before, coalesce(u.processing_status, v.before) AS processing_status, v.remaining,
      coalesce(v.settles, false) AS settled, coalesce(v.settles AND v.due, false) AS turn,
      coalesce(u.status, 'open') AS status, u.highest_sequence, u.wake_trace_parent
    FROM v LEFT JOIN u ON u.id = v.id`);
  return {
    settled: new Set(rows.filter((r) => r.settled).map((r) => r.id)),
    turns: rows
      .filter((r) => r.turn)
      .map((r) => ({
        id: r.id,
        organization_id: r.organization_id,
        status: r.status,
        highest_sequence: r.highest_sequence,
        processing_status: r.processing_status,
        wake_trace_parent: r.wake_trace_parent,
      })),
    statuses: new Map(rows.map((r) => [r.id, r.processing_status])),
    remaining: new Map(rows.map((r) => [r.id, r.remaining])),
    changes: rows
      .filter((r) => r.before !== r.processing_status)
      .map((r) => ({
        sessionId: r.id,
        organizationId: r.organization_id,
        applicationId: r.application_id,
        before: r.before,
        after: r.processing_status,
      })),
  };
}

/** The organization's billing-blocked sessions (a top-up wakes their workflows). */
export async function billingBlockedSessions(db: CommonQueryMethods, organizationId: string) {
  return db.any(sql.type(z.object({ id: z.string(), status: z.enum(['open', 'ended', 'abandoned']) }))`
    SELECT id, status FROM agent_sessions WHERE organization_id = ${organizationId} AND processing_status = 'billing_blocked'`);
}

/**
 * Conversation access narrowed to these users: every session of the application is restricted to
 * them (intersected with any earlier restriction), in the transaction that changes the setting.
 */
export async function restrictSessionsToUsers(tx: Tx, applicationId: string, userIds: readonly string[]): Promise<void> {
  const users = sql.array([...userIds], 'uuid');
  await tx.query(sql.unsafe`
    UPDATE agent_sessions SET updated_at = now(), restricted_to = CASE
      WHEN restricted_to IS NULL THEN ${users}
      ELSE ARRAY(SELECT unnest(restricted_to) INTERSECT SELECT unnest(${users}::uuid[])) END
    WHERE application_id = ${applicationId}`);
}

/**
 * Whether a session (`s`, of agent_sessions, joined with its application `a`) is for the retention
 * sweep to delete: its last activity is older than its application's retention (spec: reducing
 * retention can permanently delete older conversations), or its application was deleted with its
 * conversations (issue 32).
 */
export const doomedSession = sql.fragment`((a.retention_days IS NOT NULL AND s.last_ingest_at < now() - make_interval(days => a.retention_days))
  OR a.sessions_deleted_at IS NOT NULL)`;

/**
 * Up to `limit` conversations the retention sweep deletes, locked: those whose last activity is
 * older than their application's retention (spec: reducing retention can permanently delete older
 * conversations), and those of an application deleted with its conversations (issue 32). SKIP
 * LOCKED: a session being ingested right now is left for the next batch.
 */
export async function claimDoomedSessions(
  tx: Tx,
  limit: number,
  organizationId?: string,
): Promise<readonly { id: string; organization_id: string }[]> {
  const org = organizationId ? sql.fragment`AND s.organization_id = ${organizationId}` : sql.fragment``;
  return tx.any(sql.type(z.object({ id: z.string(), organization_id: z.string() }))`
    SELECT s.id, s.organization_id FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
    WHERE ${doomedSession} ${org}
    ORDER BY s.last_ingest_at LIMIT ${limit}
    FOR UPDATE OF s SKIP LOCKED`);
}

/**
 * The rows of these sessions that match `where`, locked in the order every multi-session lock
 * uses (see lockSessionRows), so that an update of several sessions never deadlocks with an
 * ingest batch or the drainer. The lock is the one an UPDATE of non-key columns takes (NO KEY), so
 * that inserts referencing the sessions (events, signals) do not wait for it. `columns`: more of
 * the rows' columns, read as locked (the latest committed version).
 */
function inLockOrder(sessionIds: readonly string[], where: FragmentSqlToken, o: { skipLocked?: boolean; columns?: FragmentSqlToken } = {}) {
  return sql.fragment`(SELECT id${o.columns ? sql.fragment`, ${o.columns}` : sql.fragment``} FROM agent_sessions WHERE id = ANY(${sql.array([...sessionIds], 'uuid')}) AND ${where}
    ORDER BY application_id, external_session_id COLLATE "C" FOR NO KEY UPDATE ${o.skipLocked ? sql.fragment`SKIP LOCKED` : sql.fragment``})`;
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

/**
 * Routine signals the worker's pace defers (TellPacer): each session's turn is due again and its
 * wake set for its slot (an earlier wake stands, and an ingest brings it forward: processing never
 * waits for a signal's slot). A hold's state is left as it is.
 */
export async function deferRoutineSignals(
  db: CommonQueryMethods,
  deferrals: readonly { sessionId: string; seconds: number }[],
): Promise<void> {
  if (!deferrals.length) return;
  await db.query(sql.unsafe`
    UPDATE agent_sessions s SET workflow_signalled_at = NULL,
      wake_requested_at = least(s.wake_requested_at, now() + d.seconds * interval '1 second')
    FROM unnest(${sql.array(
      deferrals.map((d) => d.sessionId),
      'uuid',
    )}, ${sql.array(
      deferrals.map((d) => d.seconds),
      'float8',
    )}) AS d(id, seconds)
    WHERE s.id = d.id`);
}

/** The scrub of an erased person's e-mail in sessions' external id, source and context (person-erasures.ts runs it). */
export function sessionScrubTarget(organizationId: string, needle: Needle): ScrubTarget {
  return {
    table: 'agent_sessions',
    key: 'id',
    keyType: 'uuid',
    scope: sql.fragment`t.organization_id = ${organizationId}`,
    match: contains(sql.fragment`concat_ws(' ', c.external_session_id, c.source::text, c.context::text)`, needle),
    set: sql.fragment`source = ${scrubbedJson(sql.fragment`c.source`, needle)}, context = ${scrubbedJson(sql.fragment`c.context`, needle)},
      external_session_id = ${erasedIdentifier(needle, { table: 'agent_sessions', column: 'external_session_id', within: ['application_id'] })}`,
  };
}

export interface ImportedSession {
  id: string;
  application_id: string;
  external_session_id: string;
  status: string;
  processing_status: 'pending' | 'capture_disabled';
  agent_version: string | null;
  source: unknown;
  context: unknown;
  restricted_to: string[] | null;
  created_at: string;
  ended_at: string | null;
}

/** `intake org import`: sessions as an export lists them; counts and the watermark come with their events (settleImportedSessions). */
export async function importSessions(tx: Tx, organizationId: string, sessions: readonly ImportedSession[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO agent_sessions (id, organization_id, application_id, external_session_id, status, processing_status, agent_version,
      source, context, restricted_to, created_at, updated_at, ended_at, last_ingest_at)
    SELECT x.id, ${organizationId}, x.application_id, x.external_session_id, x.status, x.processing_status, x.agent_version, x.source,
      x.context, x.restricted_to, x.created_at, x.created_at, x.ended_at, x.created_at
    FROM jsonb_to_recordset(${sql.jsonb(sessions as never)}) AS x(id uuid, application_id uuid, external_session_id text, status text,
      processing_status text, agent_version text, source jsonb, context jsonb, restricted_to uuid[], created_at timestamptz,
      ended_at timestamptz)`);
}

export interface ImportedEvent {
  session_id: string;
  external_event_id: string;
  sequence: number;
  revision: number;
  type: string;
  occurred_at: string;
  final: boolean | null;
  content_hash: string;
  payload: unknown;
}

/**
 * `intake org import`: events as processed (their signals come with the export, and nothing is
 * metered or analysed again), each keeping the hash retries are compared by.
 */
export async function importEvents(tx: Tx, events: readonly ImportedEvent[]): Promise<void> {
  await tx.query(sql.unsafe`
    INSERT INTO agent_events (session_id, organization_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash,
      payload, processed_revision)
    SELECT x.session_id, s.organization_id, x.external_event_id, x.sequence, x.revision, x.type, x.occurred_at, x.final,
      decode(x.content_hash, 'hex'), x.payload, x.revision
    FROM jsonb_to_recordset(${sql.jsonb(events as never)}) AS x(session_id uuid, external_event_id text, sequence bigint,
      revision integer, type text, occurred_at timestamptz, final boolean, content_hash text, payload jsonb)
    JOIN agent_sessions s ON s.id = x.session_id`);
}

/** `intake org import`, once every event is in: each imported session's counts, and its watermark at its last event. */
export async function settleImportedSessions(tx: Tx, organizationId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE agent_sessions s SET event_count = c.n, highest_sequence = c.top, processed_through_sequence = c.top
    FROM (
      SELECT e.session_id, count(*) AS n, max(e.sequence) AS top FROM agent_events e
      WHERE e.session_id IN (SELECT id FROM agent_sessions WHERE organization_id = ${organizationId}) GROUP BY e.session_id
    ) c
    WHERE s.id = c.session_id`);
}
