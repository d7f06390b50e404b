import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ExtractedSignal } from '../../providers/signal-extractor/types.js';

/** Queued qualitative analyses of finalized assistant responses, and the credits they spend. */

const jobRow = z.object({
  id: z.number(),
  event_id: z.number(),
  revision: z.number(),
  event_revision: z.number(),
  sequence: z.number(),
  external_event_id: z.string(),
  content: z.string().nullable(),
  organization_id: z.string(),
});
export type JobRow = z.infer<typeof jobRow>;

export async function nextQueuedJob(db: CommonQueryMethods, sessionId: string): Promise<JobRow | null> {
  return db.maybeOne(sql.type(jobRow)`
    SELECT j.id, j.event_id, j.revision, e.revision AS event_revision, e.sequence, e.external_event_id,
      e.payload->>'content' AS content, s.organization_id
    FROM agent_analysis_jobs j
    JOIN agent_events e ON e.id = j.event_id
    JOIN agent_sessions s ON s.id = j.session_id
    WHERE j.session_id = ${sessionId} AND j.status = 'queued'
    ORDER BY j.id LIMIT 1`);
}

export async function countQueuedJobs(db: CommonQueryMethods, sessionId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM agent_analysis_jobs WHERE session_id = ${sessionId} AND status = 'queued'`);
}

/** Visible user text since the previous assistant response: what the response answered. */
export async function exchangeUserMessages(db: CommonQueryMethods, sessionId: string, sequence: number, max = 20): Promise<string[]> {
  const rows = await db.anyFirst(sql.type(z.object({ content: z.string() }))`
    SELECT content FROM (
      SELECT payload->>'content' AS content, sequence FROM agent_events
      WHERE session_id = ${sessionId} AND type = 'user_message' AND sequence < ${sequence} AND payload->>'content' IS NOT NULL
        AND sequence > coalesce((SELECT max(sequence) FROM agent_events
          WHERE session_id = ${sessionId} AND type = 'assistant_message' AND sequence < ${sequence}), -1)
      ORDER BY sequence DESC LIMIT ${max}) last ORDER BY sequence`);
  return [...rows];
}

/** Ends a job without analysis (superseded by a newer revision, content gone, provider refused). */
export async function closeJob(db: CommonQueryMethods, jobId: number, status: 'superseded' | 'failed', errorCode: string | null): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE agent_analysis_jobs SET status = ${status}, error_code = ${errorCode}, attempts = attempts + 1, updated_at = now()
    WHERE id = ${jobId} AND status = 'queued'`);
}

/** Locks the job if it is still queued for the event's current revision. */
export async function lockQueuedJob(tx: CommonQueryMethods, jobId: number): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
    SELECT j.id FROM agent_analysis_jobs j JOIN agent_events e ON e.id = j.event_id AND e.revision = j.revision
    WHERE j.id = ${jobId} AND j.status = 'queued' FOR UPDATE OF j`);
  return row !== null;
}

export async function balance(db: CommonQueryMethods, organizationId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ credit_balance: z.number() }))`
    SELECT credit_balance FROM organizations WHERE id = ${organizationId}`);
}

/** Spends credits if the balance covers them, with its ledger line; false when it does not. */
export async function debit(tx: CommonQueryMethods, organizationId: string, amount: number, reason: string): Promise<boolean> {
  const after = await tx.maybeOneFirst(sql.type(z.object({ credit_balance: z.number() }))`
    UPDATE organizations SET credit_balance = credit_balance - ${amount}, updated_at = now()
    WHERE id = ${organizationId} AND credit_balance >= ${amount}
    RETURNING credit_balance`);
  if (after === null) return false;
  await tx.query(sql.unsafe`
    INSERT INTO credit_transactions (organization_id, amount, reason, balance_after)
    VALUES (${organizationId}, ${-amount}, ${reason}, ${after})`);
  return true;
}

/** A revision's analysis replaces the qualitative signals of the response's earlier analysis. */
export async function replaceQualitativeSignals(
  tx: CommonQueryMethods,
  job: JobRow & { session_id: string },
  signals: readonly ExtractedSignal[],
  producer: string,
): Promise<void> {
  await tx.query(sql.unsafe`DELETE FROM agent_signals WHERE event_id = ${job.event_id} AND source = 'qualitative_inference'`);
  if (!signals.length) return;
  const records = signals.map((s) => ({ kind: s.kind, rating: s.rating, summary: s.summary, labels: s.labels }));
  await tx.query(sql.unsafe`
    INSERT INTO agent_signals (organization_id, session_id, event_id, event_external_id, source, kind, rating, labels, summary, event_revision, producer)
    SELECT ${job.organization_id}, ${job.session_id}, ${job.event_id}, ${job.external_event_id}, 'qualitative_inference', x.kind, x.rating,
      ARRAY(SELECT jsonb_array_elements_text(x.labels)), x.summary, ${job.revision}, ${producer}
    FROM jsonb_to_recordset(${sql.jsonb(records)}) AS x(kind text, rating text, summary text, labels jsonb)`);
}

export async function completeJob(tx: CommonQueryMethods, jobId: number, credits: number): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE agent_analysis_jobs SET status = 'done', credits_spent = ${credits}, attempts = attempts + 1, updated_at = now() WHERE id = ${jobId}`);
}

export type StoredProcessingStatus = 'pending' | 'billing_blocked' | 'capture_disabled';

/** Moves between `pending` and `billing_blocked`; `capture_disabled` is the ingest's to set and clear. */
export async function setBillingState(db: CommonQueryMethods, sessionId: string, blocked: boolean): Promise<StoredProcessingStatus | null> {
  const from = blocked ? 'pending' : 'billing_blocked';
  const to = blocked ? 'billing_blocked' : 'pending';
  return db.maybeOneFirst(sql.type(z.object({ processing_status: z.enum(['pending', 'billing_blocked', 'capture_disabled']) }))`
    UPDATE agent_sessions SET processing_status = CASE WHEN processing_status IN (${from}, 'processing', 'completed') THEN ${to} ELSE processing_status END,
      updated_at = now()
    WHERE id = ${sessionId}
    RETURNING processing_status`);
}
