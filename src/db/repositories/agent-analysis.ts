import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ExtractedSignal } from '../../domain/signals.js';
import { unreadRows, type Tx } from '../pool.js';
import { createdSignal, type CreatedSignal } from './agent-processing.js';

/** Queued qualitative analyses of finalized assistant responses, and the credits they spend. */

const jobRow = z.object({
  id: z.number(),
  session_id: z.string(),
  event_id: z.number(),
  revision: z.number(),
  event_revision: z.number(),
  external_event_id: z.string(),
  content: z.string().nullable(),
  organization_id: z.string(),
  application_id: z.string(),
  attempts: z.number(),
  /** Credits already paid for this analysis (a round that paid, then died before writing its result). */
  credits_spent: z.number(),
  user_messages: z.array(z.string()),
  /** The organization's balance when the jobs were read (what a round may spend, before it pays). */
  credit_balance: z.number(),
});
export type JobRow = z.infer<typeof jobRow>;

/**
 * Each session's oldest queued analyses (at most `limit` per session), each with what it needs: the
 * response's content and the visible user text since the previous assistant response (the
 * exchange it answered, last 20). In job order.
 */
export async function queuedJobs(db: CommonQueryMethods, sessionIds: readonly string[], limit: number): Promise<readonly JobRow[]> {
  if (!sessionIds.length) return [];
  return db.any(sql.prepared('round_jobs', jobRow)`
    SELECT j.* FROM unnest(${sql.array([...sessionIds], 'uuid')}) AS q(id) CROSS JOIN LATERAL (
      SELECT j.id, j.session_id, j.event_id, j.revision, e.revision AS event_revision, e.external_event_id,
        e.payload->>'content' AS content, s.organization_id, s.application_id, j.attempts, j.credits_spent,
        (SELECT o.credit_balance FROM organizations o WHERE o.id = s.organization_id) AS credit_balance,
        coalesce((SELECT array_agg(u.content ORDER BY u.sequence) FROM (
          SELECT m.payload->>'content' AS content, m.sequence FROM agent_events m
          WHERE m.session_id = j.session_id AND m.type = 'user_message' AND m.sequence < e.sequence AND m.payload->>'content' IS NOT NULL
            AND m.sequence > coalesce((SELECT max(p.sequence) FROM agent_events p
              WHERE p.session_id = j.session_id AND p.type = 'assistant_message' AND p.sequence < e.sequence), -1)
          ORDER BY m.sequence DESC LIMIT 20) u), '{}') AS user_messages
      FROM agent_analysis_jobs j
      JOIN agent_events e ON e.session_id = j.session_id AND e.id = j.event_id
      JOIN agent_sessions s ON s.id = j.session_id
      WHERE j.session_id = q.id AND j.status = 'queued'
      ORDER BY j.id LIMIT ${limit}) j
    ORDER BY j.id`);
}

/** Queued analyses per session (sessions with none are absent). */
export async function countQueuedJobs(db: CommonQueryMethods, sessionIds: readonly string[]): Promise<Map<string, number>> {
  if (!sessionIds.length) return new Map();
  const rows = await db.any(sql.type(z.object({ session_id: z.string(), n: z.number() }))`
    SELECT session_id, count(*)::int AS n FROM agent_analysis_jobs
    WHERE session_id = ANY(${sql.array([...sessionIds], 'uuid')}) AND status = 'queued' GROUP BY session_id`);
  return new Map(rows.map((r) => [r.session_id, r.n]));
}

/**
 * Ends jobs without analysis (`superseded` by a newer revision; `failed`: content gone, provider
 * refused, bad answers exhausted) or, with `queued`, only counts a failed attempt.
 */
export async function updateJobs(
  tx: CommonQueryMethods,
  jobs: readonly { id: number; status: 'superseded' | 'failed' | 'queued'; errorCode: string | null }[],
): Promise<void> {
  if (!jobs.length) return;
  await tx.query(sql.prepared('round_update_jobs', unreadRows)`
    UPDATE agent_analysis_jobs j SET status = x.status, error_code = x.error_code, attempts = attempts + 1, updated_at = now()
    FROM jsonb_to_recordset(${sql.jsonb(jobs.map((j) => ({ id: j.id, status: j.status, error_code: j.errorCode })))})
      AS x(id bigint, status text, error_code text)
    WHERE j.id = x.id AND j.id = ANY(${sql.array(
      jobs.map((j) => j.id),
      'int8',
    )}) AND j.status = 'queued'`);
}

/**
 * Pays for analyses done (decision 0210), one statement per organization (in id order), each its
 * own transaction, outside any other: the organization's jobs still queued and unpaid are locked
 * (in id order: a concurrent round of the same jobs waits, then finds them paid), then its balance
 * pays for as many as it can (the first ones), one ledger line each, and those jobs record what
 * they cost. The balance row is held only for that statement's end and its commit, never across a
 * round trip to a busy worker, and a round waiting for it holds nothing an ingest needs. Returns
 * the ids the balance could not pay (a job paid or closed by a concurrent round is not among them).
 */
export async function payForJobs(
  db: CommonQueryMethods,
  jobs: readonly { id: number; organization_id: string }[],
  cost: number,
  reason: string,
): Promise<Set<number>> {
  const unpaid = new Set<number>();
  const byOrganization = Map.groupBy(jobs, (j) => j.organization_id);
  for (const organizationId of [...byOrganization.keys()].sort()) {
    const ids = byOrganization
      .get(organizationId)!
      .map((j) => j.id)
      .sort((a, b) => a - b);
    for (const r of await payFromBalance(db, organizationId, ids, cost, reason)) if (!r.paid) unpaid.add(r.id);
  }
  return unpaid;
}

/**
 * Spends `cost` credits for as many of `jobIds` as are still queued and unpaid and the
 * organization's balance pays, in one statement: the jobs locked first (in id order), then the
 * balance under its row lock (taken only when a job is payable), one ledger line each, and the cost
 * recorded on the jobs paid (the first ones). Returns each payable job and whether it was paid.
 */
async function payFromBalance(db: CommonQueryMethods, organizationId: string, jobIds: readonly number[], cost: number, reason: string) {
  return db.any(sql.prepared('round_pay', z.object({ id: z.number(), paid: z.boolean() }))`
    WITH jobs AS (
      SELECT id, row_number() OVER (ORDER BY id) AS n FROM (
        SELECT id FROM agent_analysis_jobs WHERE id = ANY(${sql.array([...jobIds], 'int8')}) AND status = 'queued' AND credits_spent = 0
        ORDER BY id FOR UPDATE) l
    ), wanted AS (SELECT count(*)::int AS n FROM jobs),
    debit AS (
      UPDATE organizations o SET credit_balance = o.credit_balance - p.n * ${cost}, updated_at = now()
      FROM (SELECT id, credit_balance AS before, least((SELECT n FROM wanted), floor(credit_balance / ${cost}))::int AS n FROM organizations
        WHERE id = ${organizationId} AND (SELECT n FROM wanted) > 0 FOR NO KEY UPDATE) p
      WHERE o.id = p.id AND p.n > 0
      RETURNING p.n, p.before
    ), ledger AS (
      INSERT INTO credit_transactions (organization_id, amount, reason, balance_after)
      SELECT ${organizationId}, ${-cost}, ${reason}, d.before - i * ${cost} FROM debit d, generate_series(1, d.n) AS i
    ), marked AS (
      UPDATE agent_analysis_jobs SET credits_spent = ${cost}, updated_at = now()
      WHERE id IN (SELECT j.id FROM jobs j, debit d WHERE j.n <= d.n)
      RETURNING id
    )
    SELECT j.id, m.id IS NOT NULL AS paid FROM jobs j LEFT JOIN marked m ON m.id = j.id ORDER BY j.id`);
}

export interface Analysed {
  job: JobRow;
  signals: readonly ExtractedSignal[];
}

/**
 * A revision's analysis replaces the qualitative signals of the response's earlier analysis.
 * Returns the signals it created (every one is new: `signal.created` is made from these).
 */
export async function replaceQualitativeSignals(
  tx: Tx,
  analysed: readonly Analysed[],
  producer: string,
): Promise<readonly CreatedSignal[]> {
  if (!analysed.length) return [];
  const records = analysed.flatMap((a) =>
    a.signals.map((s) => ({
      organization_id: a.job.organization_id,
      session_id: a.job.session_id,
      event_id: a.job.event_id,
      event_external_id: a.job.external_event_id,
      revision: a.job.revision,
      kind: s.kind,
      rating: s.rating,
      summary: s.summary,
      labels: s.labels,
    })),
  );
  // One statement: the earlier analysis's signals go as the new ones come (both see the same snapshot).
  return tx.any(sql.prepared('round_signals', createdSignal)`
    WITH replaced AS (
      DELETE FROM agent_signals WHERE source = 'qualitative_inference' AND event_id = ANY(${sql.array(
        analysed.map((a) => a.job.event_id),
        'int8',
      )})
    )
    INSERT INTO agent_signals (organization_id, session_id, event_id, event_external_id, source, kind, rating, labels, summary, event_revision, producer)
    SELECT x.organization_id, x.session_id, x.event_id, x.event_external_id, 'qualitative_inference', x.kind, x.rating,
      ARRAY(SELECT jsonb_array_elements_text(x.labels)), x.summary, x.revision, ${producer}
    FROM jsonb_to_recordset(${sql.jsonb(records)})
      AS x(organization_id uuid, session_id uuid, event_id bigint, event_external_id text, revision integer, kind text, rating text, summary text, labels jsonb)
    RETURNING id, session_id`);
}

/**
 * Closes the jobs still queued whose analysis was paid (payForJobs), locked in id order, and
 * returns their ids: the caller writes their results in the same transaction. The result of a paid
 * analysis is written even if its response was revised since: the revision has an analysis of its
 * own. A job closed by a concurrent round is left alone (and not returned).
 */
export async function completePaidJobs(tx: CommonQueryMethods, jobIds: readonly number[]): Promise<number[]> {
  if (!jobIds.length) return [];
  const rows = await tx.anyFirst(sql.prepared('round_complete', z.object({ id: z.number() }))`
    UPDATE agent_analysis_jobs j SET status = 'done', attempts = j.attempts + 1, updated_at = now()
    FROM (SELECT id FROM agent_analysis_jobs WHERE id = ANY(${sql.array([...jobIds], 'int8')}) AND status = 'queued' AND credits_spent > 0
      ORDER BY id FOR UPDATE) AS l
    WHERE j.id = l.id
    RETURNING j.id`);
  return [...rows];
}
