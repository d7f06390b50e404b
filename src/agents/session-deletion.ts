import type { DatabasePool } from 'slonik';
import type { Tx } from '../db/pool.js';
import { findSession, type Reader } from '../db/repositories/agent-conversations.js';
import { sessionSignalIds } from '../db/repositories/agent-signals.js';
import { claimDoomedSessions, deleteSessions } from '../db/repositories/agent-sessions.js';
import { forgetSubjectTraces } from '../db/repositories/webhook-deliveries.js';
import { NotFoundError } from '../errors.js';

/**
 * Deletes a conversation the reader can see (issue 32, point 1), in one transaction: its events,
 * revisions, participants, analyses and signals, and the domain events and webhook deliveries about
 * the session and its signals (their bodies hold content). Metered usage stays, as counts without
 * content. The session's workflow finds the session gone at its next step and ends
 * (`session_deleted`); an ingest with the same external id afterwards starts a new session.
 */
export async function deleteAgentSession(pool: DatabasePool, reader: Reader, sessionId: string): Promise<void> {
  await pool.transaction(async (tx) => {
    const session = await findSession(tx, reader, sessionId);
    if (!session) throw new NotFoundError('Agent session');
    await forgetTraces(tx, session.organization_id, [session.id]);
    await deleteSessions(tx, [session.id]);
  });
}

/** The domain events and webhook deliveries about these sessions of one organization and their signals. */
async function forgetTraces(tx: Tx, organizationId: string, sessionIds: readonly string[]): Promise<void> {
  await forgetSubjectTraces(tx, organizationId, [...sessionIds, ...(await sessionSignalIds(tx, sessionIds))]);
}

/**
 * One batch of the retention sweep, in one transaction: up to `limit` conversations past their
 * application's retention or of an application deleted with its conversations, deleted as
 * deleteAgentSession deletes one. Returns how many.
 */
export async function sweepDoomedSessions(pool: DatabasePool, limit: number, organizationId?: string): Promise<number> {
  return pool.transaction(async (tx) => {
    const doomed = await claimDoomedSessions(tx, limit, organizationId);
    const byOrganization = Map.groupBy(doomed, (s) => s.organization_id);
    for (const [org, sessions] of byOrganization)
      await forgetTraces(
        tx,
        org,
        sessions.map((s) => s.id),
      );
    await deleteSessions(
      tx,
      doomed.map((s) => s.id),
    );
    return doomed.length;
  });
}

/** Batches of sweepDoomedSessions until one is short: how many conversations it deleted in all (the CLI's sweep). */
export async function sweepAllDoomedSessions(pool: DatabasePool, batch: number, organizationId?: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await sweepDoomedSessions(pool, batch, organizationId);
    deleted += n;
    if (n < batch) return deleted;
  }
}
