import type { DatabasePool } from 'slonik';
import { findSession, type Reader } from '../db/repositories/agent-conversations.js';
import { sessionSignalIds } from '../db/repositories/agent-signals.js';
import { deleteSession } from '../db/repositories/agent-sessions.js';
import { forgetEventSubjects } from '../db/repositories/domain-events.js';
import { forgetDeliverySubjects } from '../db/repositories/webhook-deliveries.js';
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
    const subjects = [session.id, ...(await sessionSignalIds(tx, session.id))];
    await forgetDeliverySubjects(tx, session.organization_id, subjects);
    await forgetEventSubjects(tx, session.organization_id, subjects);
    await deleteSession(tx, session.organization_id, session.id);
  });
}
