import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import type { AnalysisResult, ProcessResult } from '../../workflows/agent-session/contract.js';
import {
  completePaidJobs,
  payForJobs,
  queuedJobs,
  replaceQualitativeSignals,
  updateJobs,
  type Analysed,
  type JobRow,
} from '../db/repositories/agent-analysis.js';
import {
  markEventsProcessed,
  meterResponses,
  pendingRows,
  queueAnalyses,
  upsertExplicitSignals,
  type CreatedSignal,
  type ProcessRow,
  type SessionEvent,
} from '../db/repositories/agent-processing.js';
import {
  advanceSessions,
  claimDueSessions,
  type DrainShard,
  lockSessionRows,
  type RoundOutcome,
  settleAnalysisRound,
  takeSessionsForPass,
  type LockedSession,
  type SignalTarget,
} from '../db/repositories/agent-sessions.js';
import { recordEvents } from '../db/repositories/domain-events.js';
import type { Tx } from '../db/pool.js';
import type { DomainEvent } from '../domain/events.js';
import { billingEvents, effectiveProcessingStatus, passSettles, type StoredProcessingStatus } from '../domain/agent-session-state.js';
import { maxOrNull, planProcessing, type ProgressSnapshot } from '../domain/agent-processing-plan.js';
import { forEachLimited } from '../concurrency.js';
import { ExtractorError, type SignalExtractor } from '../providers/signal-extractor/types.js';

const DELETED: ProcessResult = {
  deleted: true,
  processedThroughSequence: null,
  waitingFor: null,
  more: false,
  processed: 0,
  signals: 0,
  units: 0,
  queued: 0,
};

/**
 * One page of a session's pending events, in one transaction under the session's row lock (which
 * orders it with ingests of the session): the workflow's snapshot decides, by the pure
 * contiguous-watermark rule, which may be processed now; for those it writes explicit feedback
 * signals, metered units and queued analyses, marks them processed at their current revision,
 * and advances the watermark. A pass that leaves nothing it may process now takes the session's
 * wake request, in the same transaction: an ingest committed after it requests a new one (the
 * drainer takes it); one committed before it is in this page. Run twice (a retry after a crash), it changes nothing more.
 */
export async function processPending(
  pool: DatabasePool,
  sessionId: string,
  at: ProgressSnapshot,
  pageSize: number,
  o: PassOptions = {},
): Promise<ProcessResult> {
  return pool.transaction(async (tx) => {
    const [session] = await takeSessionsForPass(tx, [sessionId]);
    if (!session) return DELETED;
    // Deleted after it was read: its pass wrote nothing.
    const result = (await processPages(tx, [session], at, pageSize, o)).get(sessionId);
    if (!result) return DELETED;
    const { turn: _turn, wakeSeq: _wakeSeq, ...processed } = result;
    return processed;
  });
}

export interface PassOptions {
  /**
   * The drainer's claims: a session whose ingest is in flight (its row locked) is left for the next
   * claim, its reads wasted, rather than waited for (its wake stays: that ingest raises wake_seq).
   */
  skipIngesting?: boolean;
  /**
   * The drainer's passes: the wake is taken only when no analysis is queued either, since the
   * drainer runs them next, outside any durable record but the wake (the workflow's own activities
   * are durable in its history). Except while the session's workflow was told that its analyses
   * wait (credits, provider): it runs them when it can, and the pass settles the session.
   */
  holdWakeWhileQueued?: boolean;
  /** The drainer's passes: a settled session's routine workflow signal turn is taken with its wake (advanceSessions). */
  routineTurnEverySeconds?: number;
}

/** What a caller with no state of its own knows of a session: what is stored (the drainer). */
export const STORED_ONLY: ProgressSnapshot = { processedThroughSequence: null, highestSequence: null, terminal: false };

/** A drainer pass over one session: its result, and whether the pass took the session's wake. */
export interface DrainedSession extends PassResult {
  sessionId: string;
}

/** A pass's result in one session; `turn`: its workflow's routine signal turn, taken by the pass (PassOptions). */
interface PassResult extends ProcessResult {
  settled: boolean;
  turn: SignalTarget | null;
  /** The wake's generation the pass read (an analysis round after it may take the wake: RoundSettling). */
  wakeSeq: number;
}

/**
 * The drainer's pass: in one transaction, claims up to `limit` sessions whose wake is due (skipping
 * rows locked elsewhere and `busy`) and processes one page of each, as `processPending` does, with
 * one statement per table for all of them. Sessions that are not settled keep their wake (more
 * pages, or analyses queued) and are claimed again.
 */
export async function processDueSessions(
  pool: DatabasePool,
  shard: DrainShard,
  busy: readonly string[],
  limit: number,
  pageSize: number,
  routineTurnEverySeconds?: number,
): Promise<DrainedSession[]> {
  return pool.transaction(async (tx) => {
    const sessions = await claimDueSessions(tx, shard, busy, limit);
    return drained(
      await processPages(tx, sessions, STORED_ONLY, pageSize, {
        holdWakeWhileQueued: true,
        skipIngesting: true,
        ...(routineTurnEverySeconds === undefined ? {} : { routineTurnEverySeconds }),
      }),
    );
  });
}

/** A pass over these sessions (locked, waiting for their ingests), one page each; deleted sessions are absent. */
export async function processSessions(
  pool: DatabasePool,
  sessionIds: readonly string[],
  pageSize: number,
  o: PassOptions,
): Promise<DrainedSession[]> {
  return pool.transaction(async (tx) =>
    drained(await processPages(tx, await takeSessionsForPass(tx, sessionIds), STORED_ONLY, pageSize, o)),
  );
}

function drained(results: Map<string, PassResult>): DrainedSession[] {
  return [...results].map(([sessionId, r]) => ({ sessionId, ...r }));
}

/**
 * One page of each of these sessions (their pass locks held by the transaction): one statement per
 * table for all of them. It reads first, without locking any row; its first write locks the session
 * rows (advanceSessions), so that an ingest waits at most for the pass's last statements and commit,
 * never for its reads (decision 0210). A session deleted meanwhile (or, for the drainer, being
 * ingested right now) is left out of the writes.
 */
async function processPages(
  tx: Tx,
  sessions: readonly LockedSession[],
  at: ProgressSnapshot,
  pageSize: number,
  o: PassOptions,
): Promise<Map<string, PassResult>> {
  // The stored progress wins over the caller's snapshot: a retried call (its first attempt
  // committed, then the worker died) must not see the page it already processed as a gap.
  const progress = sessions.map(
    (session): ProgressSnapshot => ({
      processedThroughSequence: maxOrNull(at.processedThroughSequence, session.processed_through_sequence),
      highestSequence: maxOrNull(at.highestSequence, session.highest_sequence),
      terminal: at.terminal || session.status !== 'open',
    }),
  );
  const pending = Map.groupBy(
    await pendingRows(
      tx,
      sessions.map((s, i) => ({ sessionId: s.id, watermark: progress[i]!.processedThroughSequence })),
      pageSize,
    ),
    (r) => r.session_id,
  );
  const plans = sessions.map((session, i) => {
    const rows = pending.get(session.id) ?? [];
    const plan = planProcessing(
      progress[i]!,
      rows.map((r) => ({ sequence: r.sequence, revision: r.revision })),
    );
    const process = new Set(plan.process.map((e) => e.sequence));
    const picked = rows.filter((r) => process.has(r.sequence));
    // At most what was queued and what this pass queues (an analysis it finds queued already adds none).
    const queued = session.queued + picked.filter((r) => isFinalResponse(r) && r.has_content).length;
    // A full page may end before the next sequence only because it is full: look again first.
    const more = rows.length === pageSize && picked.length > 0;
    const settled = passSettles({ more, holdWakeWhileQueued: o.holdWakeWhileQueued ?? false, queued, holdTold: session.hold_told });
    return { session, plan, picked, more, queued, settled };
  });
  const stored = await advanceSessions(
    tx,
    plans.map((p) => ({
      sessionId: p.session.id,
      watermark: p.plan.processedThroughSequence,
      settled: p.settled,
      wakeSeq: p.session.wake_seq,
    })),
    {
      skipLocked: o.skipIngesting ?? false,
      ...(o.routineTurnEverySeconds === undefined ? {} : { routineTurnEverySeconds: o.routineTurnEverySeconds }),
    },
  );
  const live = plans.filter((p) => stored.has(p.session.id));
  const chosen: SessionEvent[] = live.flatMap((p) => p.picked.map((row) => ({ session: p.session, row })));
  const created = await upsertExplicitSignals(tx, chosen);
  // Spec (metering): one unit per visible finalized assistant response; a retry or revision adds none.
  const finals = chosen.filter((e) => isFinalResponse(e.row));
  const metered = await meterResponses(tx, finals);
  // Analysis needs the content: none is queued while content capture is off.
  await queueAnalyses(
    tx,
    finals.filter((e) => e.row.has_content),
  );
  await markEventsProcessed(
    tx,
    chosen.map((e) => e.row),
  );
  const byId = new Map(sessions.map((s) => [s.id, s]));
  await recordEvents(tx, [
    ...signalEvents(created, 'explicit_feedback', (id) => byId.get(id)!),
    ...live
      .filter((p) => p.picked.length > 0)
      .map(
        (p): DomainEvent => ({
          type: 'agent_session.processed',
          organizationId: p.session.organization_id,
          subjectId: p.session.id,
          payload: {
            sessionId: p.session.id,
            applicationId: p.session.application_id,
            processedThrough: p.plan.processedThroughSequence,
            status: stored.get(p.session.id)!.status,
          },
        }),
      ),
  ]);
  return new Map(
    live.map((p) => {
      const s = stored.get(p.session.id)!;
      return [
        p.session.id,
        {
          deleted: false,
          stored: { status: s.status, highestSequence: s.highest_sequence },
          processedThroughSequence: p.plan.processedThroughSequence,
          waitingFor: p.more ? null : p.plan.waitingFor,
          more: p.more,
          processed: p.picked.length,
          signals: p.picked.filter((r) => r.feedback?.rating).length,
          units: metered.filter((id) => id === p.session.id).length,
          queued: p.queued,
          settled: p.settled,
          turn: s.turn ? s : null,
          wakeSeq: p.session.wake_seq,
        },
      ];
    }),
  );
}

/** `signal.created` for each signal a statement created, with its session's owners. */
function signalEvents(
  created: readonly CreatedSignal[],
  source: 'explicit_feedback' | 'qualitative_inference',
  sessionOf: (sessionId: string) => { organization_id: string; application_id: string },
): DomainEvent[] {
  return created.map((c) => {
    const session = sessionOf(c.session_id);
    return {
      type: 'signal.created',
      organizationId: session.organization_id,
      subjectId: c.id,
      payload: { signalId: c.id, sessionId: c.session_id, applicationId: session.application_id, source },
    };
  });
}

function isFinalResponse(r: ProcessRow): boolean {
  return r.type === 'assistant_message' && r.final === true;
}

/** Analyses per `analyseQueued` call, and provider calls in flight at once within it (workflow and drainer alike). */
export const ANALYSIS_BATCH = { limit: 20, concurrency: 4 } as const;

export interface AnalysisOptions {
  extractor: SignalExtractor;
  /** Credits one analysed response costs. */
  creditCost: number;
  /** Analyses per call. */
  limit: number;
  /** Provider calls in flight at once. */
  concurrency: number;
  heartbeat?: () => void;
  signal?: AbortSignal;
  /** Told each round's results (the worker's metrics). */
  observe?: ((results: Iterable<AnalysisResult>) => void) | undefined;
}

/** Provider failures that say nothing about the response: wait and try the batch again later. */
const PROVIDER_DOWN = new Set(['provider_unreachable', 'provider_unavailable']);
/** A response the provider keeps answering badly is given up after this many tries. */
export const MAX_ANALYSIS_ATTEMPTS = 3;

/**
 * Runs a batch of the session's queued analyses, in queue order, as far as the organization's
 * balance pays (see analyseQueuedSessions).
 */
export async function analyseQueued(pool: DatabasePool, sessionId: string, o: AnalysisOptions): Promise<AnalysisResult> {
  return (await analyseQueuedSessions(pool, [sessionId], o)).get(sessionId)!;
}

/**
 * Runs a batch of each session's queued analyses (at most `limit` per session), in queue order, as
 * far as each organization's balance pays. The provider is called outside any transaction; then
 * the analyses are paid (one ledger line per response, the cost recorded on each job) in one short
 * transaction, and their results written and the jobs closed in another for all the sessions, so
 * a retried call never pays or writes twice (a job paid and not yet written is not paid again). A provider that
 * is down ends the batch with `providerUnavailable` for the sessions it left (the workflow waits
 * and keeps processing events meanwhile); a refusal fails that analysis; a bad answer is tried
 * again up to MAX_ANALYSIS_ATTEMPTS times.
 */
export async function analyseQueuedSessions(
  pool: DatabasePool,
  sessionIds: readonly string[],
  o: AnalysisOptions,
): Promise<Map<string, AnalysisResult>> {
  return (await analyseDrainedSessions(pool, sessionIds, o)).results;
}

/** The drainer's round settles the sessions its pass left only for their analyses (RoundOutcome.wakeSeq). */
export interface RoundSettling {
  /** The wake's generation each session's pass read (DrainedSession.wakeSeq). */
  wakeSeqs: ReadonlyMap<string, number>;
  /** As the pass's (PassOptions.routineTurnEverySeconds). */
  routineTurnEverySeconds?: number | undefined;
}

/**
 * An analysis round (analyseQueuedSessions) that, given `settling`, also takes the wake of each
 * session it leaves with nothing queued and not held, if no ingest requested it again since its
 * pass read it: the pass that would otherwise follow only to take it is saved. `settled`: those
 * sessions; `turns`: their workflows' routine signal turns taken with them, for the caller to send.
 */
export async function analyseDrainedSessions(
  pool: DatabasePool,
  sessionIds: readonly string[],
  o: AnalysisOptions,
  settling?: RoundSettling,
): Promise<{ results: Map<string, AnalysisResult>; settled: Set<string>; turns: SignalTarget[] }> {
  const jobs = await queuedJobs(pool, sessionIds, o.limit);
  const superseded = jobs.filter((j) => j.event_revision !== j.revision);
  const contentless = jobs.filter((j) => j.event_revision === j.revision && j.content === null);
  await closeJobs(pool, [
    ...superseded.map((j) => closing(j, 'superseded', null)),
    ...contentless.map((j) => closing(j, 'failed', 'content_not_stored')),
  ]);
  const blocked = new Set<string>();
  const ready = affordable(
    jobs.filter((j) => j.event_revision === j.revision && j.content !== null),
    o.creditCost,
    blocked,
  );
  const { analysed, refused, unanswered } = await extractAll(ready, o);
  await closeJobs(pool, refused);
  // Paid first, one statement per organization that holds no session row (payForJobs): a round
  // waiting for its organization's balance never holds up an ingest. Unpaid analyses leave their
  // sessions billing-blocked; what was paid is written below, or by the next round if this one dies first.
  const unpaid = await payForJobs(
    pool,
    analysed.filter((a) => a.job.credits_spent === 0).map((a) => a.job),
    o.creditCost,
    'agent_response_analysis',
  );
  for (const a of analysed) if (unpaid.has(a.job.id)) blocked.add(a.job.session_id);
  // The analyses, the round's billing verdict and its events commit together: a reader that sees
  // the analyses done sees the processing status they leave.
  const providerWaits = new Set(unanswered.map((j) => j.session_id));
  const outcomes = sessionIds.map((id) => {
    const wakeSeq = settling?.wakeSeqs.get(id);
    return {
      sessionId: id,
      blocked: blocked.has(id),
      endHold: !blocked.has(id) && !providerWaits.has(id),
      ...(wakeSeq === undefined ? {} : { wakeSeq }),
    };
  });
  const { written, statuses, remaining, settled, turns } = await writeRound(
    pool,
    outcomes,
    (tx, live) => writeAnalyses(tx, live, analysed, o),
    {
      ...(settling?.routineTurnEverySeconds === undefined ? {} : { routineTurnEverySeconds: settling.routineTurnEverySeconds }),
    },
  );
  const count = (list: readonly { sessionId: string }[], id: string) => list.filter((x) => x.sessionId === id).length;
  const failed = [...contentless.map((j) => closing(j, 'failed', null)), ...refused.filter((r) => r.status === 'failed')];
  const results = new Map(
    sessionIds.map((id) => {
      const status = statuses.get(id);
      const base = {
        analysed: written.get(id) ?? 0,
        failed: count(failed, id),
        billingBlocked: blocked.has(id),
        providerUnavailable: providerWaits.has(id),
      };
      const result: AnalysisResult =
        status === undefined
          ? { ...base, deleted: true, remaining: 0, processingStatus: 'pending' }
          : { ...base, deleted: false, remaining: remaining.get(id) ?? 0, processingStatus: effectiveProcessingStatus(status) };
      return [id, result];
    }),
  );
  o.observe?.(results.values());
  return { results, settled, turns };
}

/** Waits before a round's write looks again for the session rows ingests held; after the last, it waits for the rows. */
const ROUND_WRITE_RETRY_MS = [5, 20, 50] as const;

/**
 * An analysis round's write: the analyses (`write`), the billing verdict, the holds and wakes
 * (settleAnalysisRound) and their events commit together, under the sessions' rows (lock order),
 * which order it after a concurrent ingest (a purge, a revision) and a pass, and a concurrent round
 * of the same sessions after it. The rows are taken with SKIP LOCKED: a round never waits for one
 * session's ingest while it holds the rows of the others, so an ingest waits at most for the
 * statements of one round that holds its session, never for a convoy behind another session's
 * ingest (decision 0210, fourth part). The sessions left out are written by a further transaction
 * shortly after; the last one waits for their rows.
 */
async function writeRound(
  pool: DatabasePool,
  outcomes: readonly RoundOutcome[],
  write: (tx: Tx, live: ReadonlySet<string>) => Promise<Map<string, number>>,
  o: { routineTurnEverySeconds?: number },
) {
  const total = {
    written: new Map<string, number>(),
    statuses: new Map<string, StoredProcessingStatus>(),
    remaining: new Map<string, number>(),
    settled: new Set<string>(),
    turns: [] as SignalTarget[],
  };
  let left = [...outcomes];
  for (let attempt = 0; left.length > 0; attempt++) {
    const wait = ROUND_WRITE_RETRY_MS[attempt - 1];
    if (wait !== undefined) await sleep(wait);
    const skipLocked = attempt < ROUND_WRITE_RETRY_MS.length;
    const done = await pool.transaction(async (tx) => {
      const live = new Set(
        await lockSessionRows(
          tx,
          left.map((x) => x.sessionId),
          { skipLocked },
        ),
      );
      const written = await write(tx, live);
      // The billing verdict, the holds that end, the sessions whose queue is now empty (and, for the
      // drainer, the wakes it takes): one statement.
      const verdict = await settleAnalysisRound(
        tx,
        left.filter((x) => live.has(x.sessionId)),
        o,
      );
      await recordEvents(tx, billingEvents(verdict.changes));
      return { live, written, ...verdict };
    });
    for (const [id, n] of done.written) total.written.set(id, n);
    for (const [id, status] of done.statuses) total.statuses.set(id, status);
    for (const [id, n] of done.remaining) total.remaining.set(id, n);
    for (const id of done.settled) total.settled.add(id);
    total.turns.push(...done.turns);
    // Left out: held by an ingest (taken next time), or deleted (absent from the last attempt too).
    left = skipLocked ? left.filter((x) => !done.live.has(x.sessionId)) : [];
  }
  return total;
}

type Closing = { id: number; sessionId: string; status: 'failed' | 'superseded' | 'queued'; errorCode: string | null };

function closing(j: JobRow, status: Closing['status'], errorCode: string | null): Closing {
  return { id: j.id, sessionId: j.session_id, status, errorCode };
}

/**
 * Never calls a (paid) provider for analyses the balance cannot pay: the jobs each organization's
 * balance (as read with the jobs) pays for, in queue order; the sessions of the others are added
 * to `blocked`.
 */
function affordable(jobs: readonly JobRow[], creditCost: number, blocked: Set<string>): JobRow[] {
  const budget = new Map(jobs.map((j) => [j.organization_id, Math.floor(j.credit_balance / creditCost)]));
  return jobs.filter((j) => {
    // Paid by an earlier round that died before writing its result: analysed again, not paid again.
    if (j.credits_spent > 0) return true;
    const left = budget.get(j.organization_id) ?? 0;
    if (left <= 0) blocked.add(j.session_id);
    else budget.set(j.organization_id, left - 1);
    return left > 0;
  });
}

/**
 * Calls the provider for each job, `concurrency` at a time, until the provider is found down;
 * `unanswered`: the jobs it was down for or not asked about after that.
 */
async function extractAll(jobs: readonly JobRow[], o: AnalysisOptions) {
  const analysed: Analysed[] = [];
  const refused: Closing[] = [];
  const answered = new Set<number>();
  let providerDown = false;
  await forEachLimited(
    jobs,
    o.concurrency,
    async (job) => {
      try {
        const signals = await o.extractor.extract(
          { userMessages: job.user_messages, response: job.content ?? '' },
          o.signal ? { signal: o.signal } : {},
        );
        analysed.push({ job, signals });
        answered.add(job.id);
      } catch (error) {
        if (!(error instanceof ExtractorError)) throw error;
        if (PROVIDER_DOWN.has(error.code)) {
          providerDown = true;
        } else {
          // A refusal fails the analysis at once; a bad answer is retried a few times, then fails.
          const exhausted = !error.retryable || job.attempts + 1 >= MAX_ANALYSIS_ATTEMPTS;
          refused.push(closing(job, exhausted ? 'failed' : 'queued', error.code));
          answered.add(job.id);
        }
      }
      o.heartbeat?.();
    },
    () => providerDown,
  );
  analysed.sort((a, b) => a.job.id - b.job.id);
  return { analysed, refused, unanswered: providerDown ? jobs.filter((j) => !answered.has(j.id)) : [] };
}

/** Closes (or counts an attempt of) jobs under their sessions' locks, like every other write. */
async function closeJobs(pool: DatabasePool, jobs: readonly Closing[]): Promise<void> {
  if (!jobs.length) return;
  await pool.transaction(async (tx) => {
    const live = new Set(await lockSessionRows(tx, [...new Set(jobs.map((j) => j.sessionId))]));
    await updateJobs(
      tx,
      jobs.filter((j) => live.has(j.sessionId)),
    );
  });
}

/**
 * Writes the results of the paid analyses of the (locked, `sessions`) sessions in the caller's
 * transaction and closes their jobs; a job no longer queued (written by a concurrent round) is
 * left alone. Returns the analyses written per session.
 */
async function writeAnalyses(
  tx: Tx,
  sessions: ReadonlySet<string>,
  analysed: readonly Analysed[],
  o: AnalysisOptions,
): Promise<Map<string, number>> {
  if (!analysed.length) return new Map();
  const closed = new Set(
    await completePaidJobs(
      tx,
      analysed.filter((a) => sessions.has(a.job.session_id)).map((a) => a.job.id),
    ),
  );
  const paid = analysed.filter((a) => closed.has(a.job.id));
  const created = await replaceQualitativeSignals(tx, paid, o.extractor.name);
  const jobOf = new Map(paid.map((a) => [a.job.session_id, a.job]));
  await recordEvents(
    tx,
    signalEvents(created, 'qualitative_inference', (id) => jobOf.get(id)!),
  );
  const written = new Map<string, number>();
  for (const a of paid) written.set(a.job.session_id, (written.get(a.job.session_id) ?? 0) + 1);
  return written;
}
