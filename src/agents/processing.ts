import type { DatabasePool } from 'slonik';
import type { AnalysisResult, ProcessResult, ProgressSnapshot } from '../../workflows/agent-session/contract.js';
import {
  balance, closeJobs, completeJobs, countQueuedJobs, debitUpTo, lockQueuedJobs, queuedJobs, replaceQualitativeSignals, setBillingState,
  type Analysed, type JobRow,
} from '../db/repositories/agent-analysis.js';
import {
  lockSessionRow, markProcessed, meterResponses, pendingRows, queueAnalyses, upsertExplicitSignals,
} from '../db/repositories/agent-processing.js';
import { planProcessing } from '../../workflows/agent-session/state.js';
import { ExtractorError, type SignalExtractor } from '../providers/signal-extractor/types.js';

/**
 * One page of a session's pending events, in one transaction under the session's row lock (which
 * orders it with ingests of the session): the workflow's snapshot decides, by the pure
 * contiguous-watermark rule, which may be processed now; for those it writes explicit feedback
 * signals, metered units and queued analyses, marks them processed at their current revision,
 * and advances the watermark. Run twice (a retry after a crash), it changes nothing more.
 */
export async function processPending(pool: DatabasePool, sessionId: string, at: ProgressSnapshot, pageSize: number): Promise<ProcessResult> {
  return pool.transaction(async (tx) => {
    const session = await lockSessionRow(tx, sessionId);
    if (!session) return { deleted: true, processedThroughSequence: null, waitingFor: null, more: false, processed: 0, signals: 0, units: 0, queued: 0 };
    const pending = await pendingRows(tx, sessionId, pageSize);
    const plan = planProcessing(at, pending.map((r) => ({ sequence: r.sequence, revision: r.revision })));
    const chosen = new Set(plan.process.map((e) => e.sequence));
    const rows = pending.filter((r) => chosen.has(r.sequence));
    const signals = await upsertExplicitSignals(tx, session, rows);
    // Spec (metering): one unit per visible finalized assistant response; a retry or revision adds none.
    const finals = rows.filter((r) => r.type === 'assistant_message' && r.final === true);
    const units = await meterResponses(tx, session, finals.map((r) => r.id));
    // Analysis needs the content: none is queued while content capture is off.
    await queueAnalyses(tx, sessionId, finals.filter((r) => r.has_content));
    await markProcessed(tx, sessionId, rows.map((r) => r.id), plan.processedThroughSequence);
    return {
      deleted: false,
      processedThroughSequence: plan.processedThroughSequence,
      waitingFor: plan.waitingFor,
      more: pending.length === pageSize && rows.length > 0,
      processed: rows.length,
      signals,
      units,
      queued: await countQueuedJobs(tx, sessionId),
    };
  });
}

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

/**
 * Runs a batch of the session's queued analyses, in queue order, as far as the organization's
 * balance pays. The provider is called outside any transaction; the results are written, the
 * credits spent (one ledger line per response) and the jobs closed in one transaction, so a
 * retried call never pays or writes twice.
 */
export async function analyseQueued(pool: DatabasePool, sessionId: string, o: AnalysisOptions): Promise<AnalysisResult> {
  const jobs = await queuedJobs(pool, sessionId, o.limit);
  const superseded = jobs.filter((j) => j.event_revision !== j.revision);
  const contentless = jobs.filter((j) => j.event_revision === j.revision && j.content === null);
  await closeJobs(pool, superseded.map((j) => ({ id: j.id, errorCode: null })), 'superseded');
  await closeJobs(pool, contentless.map((j) => ({ id: j.id, errorCode: 'content_not_stored' })), 'failed');
  let ready = jobs.filter((j) => j.event_revision === j.revision && j.content !== null);
  let billingBlocked = false;
  const organizationId = jobs[0]?.organization_id;
  if (ready.length && organizationId) {
    // Never call a (paid) provider for analyses the balance cannot pay.
    const affordable = Math.floor((await balance(pool, organizationId)) / o.creditCost);
    if (affordable < ready.length) billingBlocked = true;
    ready = ready.slice(0, affordable);
  }
  const { analysed, refused } = await extractAll(ready, o);
  await closeJobs(pool, refused, 'failed');
  let written = 0;
  if (analysed.length) {
    const outcome = await writeAnalyses(pool, sessionId, analysed, o);
    written = outcome.written;
    billingBlocked ||= outcome.blocked;
  }
  const status = await setBillingState(pool, sessionId, billingBlocked);
  const failed = contentless.length + refused.length;
  if (status === null) return { deleted: true, analysed: written, failed, remaining: 0, billingBlocked, processingStatus: 'pending' };
  return { deleted: false, analysed: written, failed, remaining: await countQueuedJobs(pool, sessionId), billingBlocked, processingStatus: status };
}

/** Calls the provider for each job, `concurrency` at a time; a refusal fails only its job. */
async function extractAll(jobs: readonly JobRow[], o: AnalysisOptions) {
  const analysed: Analysed[] = [];
  const refused: { id: number; errorCode: string }[] = [];
  let next = 0;
  const run = async () => {
    for (let i = next++; i < jobs.length; i = next++) {
      const job = jobs[i]!;
      try {
        const signals = await o.extractor.extract({ userMessages: job.user_messages, response: job.content ?? '' }, o.signal ? { signal: o.signal } : {});
        analysed.push({ job, signals });
      } catch (error) {
        // Retryable provider errors propagate: the activity retries with backoff.
        if (!(error instanceof ExtractorError) || error.retryable) throw error;
        refused.push({ id: job.id, errorCode: error.code });
      }
      o.heartbeat?.();
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, jobs.length) }, run));
  analysed.sort((a, b) => a.job.id - b.job.id);
  return { analysed, refused };
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
