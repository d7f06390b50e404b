import type { DatabasePool } from 'slonik';
import type { AnalysisResult, EventRef, ProcessResult } from '../../workflows/agent-session/contract.js';
import {
  balance, closeJob, completeJob, countQueuedJobs, debit, exchangeUserMessages, lockQueuedJob, nextQueuedJob, replaceQualitativeSignals,
  setBillingState, type JobRow,
} from '../db/repositories/agent-analysis.js';
import {
  eventsToProcess, lockSessionRow, markProcessed, meterResponses, queueAnalyses, upsertExplicitSignals,
} from '../db/repositories/agent-processing.js';
import { ExtractorError, type SignalExtractor } from '../providers/signal-extractor/types.js';

/**
 * One batch of a session's events, in one transaction under the session's row lock: explicit
 * feedback signals, metered units, queued analyses, the events marked processed at the revision
 * the workflow saw, and the watermark. Run twice (a retry after a crash), it changes nothing more.
 */
export async function processEvents(
  pool: DatabasePool,
  sessionId: string,
  batch: { events: readonly EventRef[]; processedThroughSequence: number | null },
): Promise<ProcessResult> {
  return pool.transaction(async (tx) => {
    const session = await lockSessionRow(tx, sessionId);
    if (!session) return { deleted: true, processed: 0, signals: 0, units: 0, queued: 0 };
    const rows = await eventsToProcess(tx, sessionId, batch.events);
    const signals = await upsertExplicitSignals(tx, session, rows);
    // Spec (metering): one unit per visible finalized assistant response; a retry or revision adds none.
    const finals = rows.filter((r) => r.type === 'assistant_message' && r.final === true);
    const units = await meterResponses(tx, session, finals.map((r) => r.id));
    // Analysis needs the content: none is queued while content capture is off.
    const queued = await queueAnalyses(tx, sessionId, finals.filter((r) => r.has_content));
    await markProcessed(tx, sessionId, rows.map((r) => r.id), batch.processedThroughSequence);
    return { deleted: false, processed: rows.length, signals, units, queued };
  });
}

export interface AnalysisOptions {
  extractor: SignalExtractor;
  /** Credits one analysed response costs. */
  creditCost: number;
  /** Analyses per call (the activity heartbeats after each). */
  limit: number;
  heartbeat?: () => void;
  signal?: AbortSignal;
}

/**
 * Runs the session's queued analyses in order while the organization's balance pays for them.
 * The provider is called outside any transaction; its result is written, the credits spent and
 * the job closed in one transaction, so a retried call never pays or writes twice.
 */
export async function analyseQueued(pool: DatabasePool, sessionId: string, o: AnalysisOptions): Promise<AnalysisResult> {
  let analysed = 0;
  let failed = 0;
  let billingBlocked = false;
  for (let i = 0; i < o.limit; i++) {
    const job = await nextQueuedJob(pool, sessionId);
    if (!job) break;
    if (job.event_revision !== job.revision) {
      await closeJob(pool, job.id, 'superseded', null);
      continue;
    }
    if (job.content === null) {
      await closeJob(pool, job.id, 'failed', 'content_not_stored');
      failed++;
      continue;
    }
    if ((await balance(pool, job.organization_id)) < o.creditCost) {
      billingBlocked = true;
      break;
    }
    const outcome = await analyseJob(pool, sessionId, job, o);
    if (outcome === 'billing_blocked') {
      billingBlocked = true;
      break;
    }
    if (outcome === 'failed') failed++;
    if (outcome === 'analysed') analysed++;
    o.heartbeat?.();
  }
  const status = await setBillingState(pool, sessionId, billingBlocked);
  if (status === null) return { deleted: true, analysed, failed, remaining: 0, billingBlocked, processingStatus: 'pending' };
  return { deleted: false, analysed, failed, remaining: await countQueuedJobs(pool, sessionId), billingBlocked, processingStatus: status };
}

async function analyseJob(pool: DatabasePool, sessionId: string, job: JobRow, o: AnalysisOptions): Promise<'analysed' | 'failed' | 'skipped' | 'billing_blocked'> {
  const userMessages = await exchangeUserMessages(pool, sessionId, job.sequence);
  let signals;
  try {
    signals = await o.extractor.extract({ userMessages, response: job.content ?? '' }, o.signal ? { signal: o.signal } : {});
  } catch (error) {
    // Retryable provider errors propagate: the activity retries with backoff.
    if (error instanceof ExtractorError && !error.retryable) {
      await closeJob(pool, job.id, 'failed', error.code);
      return 'failed';
    }
    throw error;
  }
  return pool.transaction(async (tx) => {
    // The session lock orders this write after a concurrent ingest (a purge, a revision).
    if (!(await lockSessionRow(tx, sessionId))) return 'skipped';
    if (!(await lockQueuedJob(tx, job.id))) return 'skipped';
    if (!(await debit(tx, job.organization_id, o.creditCost, 'agent_response_analysis'))) return 'billing_blocked';
    await replaceQualitativeSignals(tx, { ...job, session_id: sessionId }, signals, o.extractor.name);
    await completeJob(tx, job.id, o.creditCost);
    return 'analysed';
  });
}
