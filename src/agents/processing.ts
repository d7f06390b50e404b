import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import type { AnalysisResult, ProcessResult, ProgressSnapshot } from '../../workflows/agent-session/contract.js';
import {
  balance, completeJobs, countQueuedJobs, debitUpTo, lockQueuedJobs, queuedJobs, replaceQualitativeSignals, setBillingState, updateJobs,
  type Analysed, type JobRow,
} from '../db/repositories/agent-analysis.js';
import {
  lockSessionRow, markProcessed, meterResponses, pendingRows, queueAnalyses, upsertExplicitSignals, type LockedSession,
} from '../db/repositories/agent-processing.js';
import { maxOrNull, planProcessing } from '../../workflows/agent-session/state.js';
import { forEachLimited } from '../concurrency.js';
import { ExtractorError, type SignalExtractor } from '../providers/signal-extractor/types.js';

/**
 * One page of a session's pending events, in one transaction under the session's row lock (which
 * orders it with ingests of the session): the workflow's snapshot decides, by the pure
 * contiguous-watermark rule, which may be processed now; for those it writes explicit feedback
 * signals, metered units and queued analyses, marks them processed at their current revision,
 * and advances the watermark. A pass that leaves nothing it may process now takes the session's
 * wake request, in the same transaction: an ingest committed after it requests a new one (the
 * drainer takes it); one committed before it is in this page. Run twice (a retry after a crash), it changes nothing more.
 */
export async function processPending(pool: DatabasePool, sessionId: string, at: ProgressSnapshot, pageSize: number, o: PassOptions = {}): Promise<ProcessResult> {
  return pool.transaction(async (tx) => {
    const session = await lockSessionRow(tx, sessionId);
    if (!session) return { deleted: true, processedThroughSequence: null, waitingFor: null, more: false, processed: 0, signals: 0, units: 0, queued: 0 };
    return processPage(tx, session, at, pageSize, o);
  });
}

export interface PassOptions {
  /**
   * The drainer's passes: the wake is taken only when no analysis is queued either, since the
   * drainer runs them next, outside any durable record but the wake (the workflow's own activities
   * are durable in its history).
   */
  holdWakeWhileQueued?: boolean;
}

/** What a caller with no state of its own knows of a session: what is stored (the drainer). */
export const STORED_ONLY: ProgressSnapshot = { processedThroughSequence: null, highestSequence: null, terminal: false };

/** One page of `processPending`, for a session the transaction has locked. */
async function processPage(tx: DatabaseTransactionConnection, session: LockedSession, at: ProgressSnapshot, pageSize: number, o: PassOptions): Promise<ProcessResult> {
  const sessionId = session.id;
  const pending = await pendingRows(tx, sessionId, pageSize);
  // The stored progress wins over the caller's snapshot: a retried call (its first attempt
  // committed, then the worker died) must not see the page it already processed as a gap.
  const current: ProgressSnapshot = {
    processedThroughSequence: maxOrNull(at.processedThroughSequence, session.processed_through_sequence),
    highestSequence: maxOrNull(at.highestSequence, session.highest_sequence),
    terminal: at.terminal || session.status !== 'open',
  };
  const plan = planProcessing(current, pending.map((r) => ({ sequence: r.sequence, revision: r.revision })));
  const chosen = new Set(plan.process.map((e) => e.sequence));
  const rows = pending.filter((r) => chosen.has(r.sequence));
  const signals = await upsertExplicitSignals(tx, session, rows);
  // Spec (metering): one unit per visible finalized assistant response; a retry or revision adds none.
  const finals = rows.filter((r) => r.type === 'assistant_message' && r.final === true);
  const units = await meterResponses(tx, session, finals.map((r) => r.id));
  // Analysis needs the content: none is queued while content capture is off.
  await queueAnalyses(tx, sessionId, finals.filter((r) => r.has_content));
  // A full page may end before the next sequence only because it is full: look again first.
  const more = pending.length === pageSize && rows.length > 0;
  const queued = await countQueuedJobs(tx, sessionId);
  const settled = !more && !(o.holdWakeWhileQueued && queued > 0);
  const stored = await markProcessed(tx, sessionId, rows.map((r) => r.id), plan.processedThroughSequence, settled);
  return {
    deleted: false,
    stored: { status: stored.status, highestSequence: stored.highest_sequence },
    processedThroughSequence: plan.processedThroughSequence,
    waitingFor: more ? null : plan.waitingFor,
    more,
    processed: rows.length,
    signals,
    units,
    queued,
  };
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
}

/** Provider failures that say nothing about the response: wait and try the batch again later. */
const PROVIDER_DOWN = new Set(['provider_unreachable', 'provider_unavailable']);
/** A response the provider keeps answering badly is given up after this many tries. */
export const MAX_ANALYSIS_ATTEMPTS = 3;

/**
 * Runs a batch of the session's queued analyses, in queue order, as far as the organization's
 * balance pays. The provider is called outside any transaction; the results are written, the
 * credits spent (one ledger line per response) and the jobs closed in one transaction, so a
 * retried call never pays or writes twice. A provider that is down ends the batch with
 * `providerUnavailable` (the workflow waits and keeps processing events meanwhile); a refusal fails
 * that analysis; a bad answer is tried again up to MAX_ANALYSIS_ATTEMPTS times.
 */
export async function analyseQueued(pool: DatabasePool, sessionId: string, o: AnalysisOptions): Promise<AnalysisResult> {
  const jobs = await queuedJobs(pool, sessionId, o.limit);
  const superseded = jobs.filter((j) => j.event_revision !== j.revision);
  const contentless = jobs.filter((j) => j.event_revision === j.revision && j.content === null);
  await closeJobs(pool, sessionId, [
    ...superseded.map((j) => ({ id: j.id, status: 'superseded' as const, errorCode: null })),
    ...contentless.map((j) => ({ id: j.id, status: 'failed' as const, errorCode: 'content_not_stored' })),
  ]);
  let ready = jobs.filter((j) => j.event_revision === j.revision && j.content !== null);
  let billingBlocked = false;
  const organizationId = jobs[0]?.organization_id;
  if (ready.length && organizationId) {
    // Never call a (paid) provider for analyses the balance cannot pay.
    const affordable = Math.floor((await balance(pool, organizationId)) / o.creditCost);
    if (affordable < ready.length) billingBlocked = true;
    ready = ready.slice(0, affordable);
  }
  const { analysed, refused, providerUnavailable } = await extractAll(ready, o);
  await closeJobs(pool, sessionId, refused);
  let written = 0;
  if (analysed.length) {
    const outcome = await writeAnalyses(pool, sessionId, analysed, o);
    written = outcome.written;
    billingBlocked ||= outcome.blocked;
  }
  const status = await setBillingState(pool, sessionId, billingBlocked);
  const failed = contentless.length + refused.filter((r) => r.status === 'failed').length;
  const base = { analysed: written, failed, billingBlocked, providerUnavailable };
  if (status === null) return { ...base, deleted: true, remaining: 0, processingStatus: 'pending' };
  return { ...base, deleted: false, remaining: await countQueuedJobs(pool, sessionId), processingStatus: status };
}

type Closing = { id: number; status: 'failed' | 'superseded' | 'queued'; errorCode: string | null };

/** Calls the provider for each job, `concurrency` at a time, until the provider is found down. */
async function extractAll(jobs: readonly JobRow[], o: AnalysisOptions) {
  const analysed: Analysed[] = [];
  const refused: Closing[] = [];
  let providerUnavailable = false;
  await forEachLimited(jobs, o.concurrency, async (job) => {
    try {
      const signals = await o.extractor.extract({ userMessages: job.user_messages, response: job.content ?? '' }, o.signal ? { signal: o.signal } : {});
      analysed.push({ job, signals });
    } catch (error) {
      if (!(error instanceof ExtractorError)) throw error;
      if (PROVIDER_DOWN.has(error.code)) {
        providerUnavailable = true;
      } else {
        // A refusal fails the analysis at once; a bad answer is retried a few times, then fails.
        const exhausted = !error.retryable || job.attempts + 1 >= MAX_ANALYSIS_ATTEMPTS;
        refused.push({ id: job.id, status: exhausted ? 'failed' : 'queued', errorCode: error.code });
      }
    }
    o.heartbeat?.();
  }, () => providerUnavailable);
  analysed.sort((a, b) => a.job.id - b.job.id);
  return { analysed, refused, providerUnavailable };
}

/** Closes (or counts an attempt of) jobs under the session's lock, like every other write. */
async function closeJobs(pool: DatabasePool, sessionId: string, jobs: readonly Closing[]): Promise<void> {
  if (!jobs.length) return;
  await pool.transaction(async (tx) => {
    if (!(await lockSessionRow(tx, sessionId))) return;
    await updateJobs(tx, jobs);
  });
}

async function writeAnalyses(pool: DatabasePool, sessionId: string, analysed: readonly Analysed[], o: AnalysisOptions) {
  return pool.transaction(async (tx) => {
    // The session lock orders this write after a concurrent ingest (a purge, a revision).
    if (!(await lockSessionRow(tx, sessionId))) return { written: 0, blocked: false };
    const live = new Set(await lockQueuedJobs(tx, analysed.map((a) => a.job.id)));
    const current = analysed.filter((a) => live.has(a.job.id));
    if (!current.length) return { written: 0, blocked: false };
    const paid = await debitUpTo(tx, current[0]!.job.organization_id, current.length, o.creditCost, 'agent_response_analysis');
    const kept = current.slice(0, paid);
    await replaceQualitativeSignals(tx, sessionId, kept, o.extractor.name);
    await completeJobs(tx, kept.map((a) => a.job.id), o.creditCost);
    return { written: kept.length, blocked: paid < current.length };
  });
}
