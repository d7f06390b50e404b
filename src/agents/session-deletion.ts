import type { DatabasePool } from 'slonik';
import type { Tx } from '../db/pool.js';
import { findSession, type Reader } from '../db/repositories/agent-conversations.js';
import { sessionSignalIds } from '../db/repositories/agent-signals.js';
import { claimDoomedSessions, deleteSessions } from '../db/repositories/agent-sessions.js';
import { forgetSubjectTraces } from '../db/repositories/webhook-deliveries.js';
import { NotFoundError } from '../errors.js';
import { isLockTimeout } from '../dependency-errors.js';
import { compareUuids, uuidAtTime, weekStart } from '../domain/event-partitions.js';
import {
  deleteSessionRowsButEvents,
  dropWeeklyPartition,
  limitLockWait,
  lockDoomedRange,
  rangeHoldsKeptSession,
  takeMaintainerLock,
  tableExists,
  weeklyPartitions,
} from '../db/repositories/event-partitions.js';
import { MAINTAINER_LOCK_WAIT_MS } from './event-partitions.js';

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

/** What one pass of dropExpiredEventPartitions did. */
export interface PartitionDrops {
  /** The weekly partitions dropped, every session of theirs past retention. */
  dropped: string[];
  /** The conversations deleted with them. */
  deletedSessions: number;
  /** Partitions whose every session was doomed but whose locks were busy: the next sweep tries again. */
  busy: string[];
}

/**
 * Retention by partition (decision 0216): a weekly partition of agent_events whose sessions are all
 * past retention (or of deleted applications) is dropped instead of deleted row by row, with its
 * sessions. Weeks before the current one, oldest first; a week holding a session its application
 * keeps is left to the row-by-row sweep (the tier's edge). One transaction per week: its sessions
 * locked and checked again, their other rows deleted, then the partition dropped and the sessions
 * deleted, which holds agent_events' lock (`lockWaitMs` at most to get it) only for the last two.
 */
export async function dropExpiredEventPartitions(pool: DatabasePool, o: { now?: Date; lockWaitMs?: number } = {}): Promise<PartitionDrops> {
  const before = uuidAtTime(weekStart(o.now ?? new Date()));
  const result: PartitionDrops = { dropped: [], deletedSessions: 0, busy: [] };
  for (const partition of await weeklyPartitions(pool)) {
    if (compareUuids(partition.to, before) > 0) break;
    if (await rangeHoldsKeptSession(pool, partition)) continue;
    try {
      const deleted = await pool.transaction(async (tx) => {
        // One maintainer at a time (a scheduled sweep and `intake retention sweep`): the partition may be gone since the list.
        await takeMaintainerLock(tx);
        if (!(await tableExists(tx, partition.name))) return null;
        await limitLockWait(tx, o.lockWaitMs ?? MAINTAINER_LOCK_WAIT_MS);
        const doomed = await lockDoomedRange(tx, partition);
        if (!doomed) return null;
        const ids = doomed.map((s) => s.id);
        for (const [org, sessions] of Map.groupBy(doomed, (s) => s.organization_id))
          await forgetTraces(
            tx,
            org,
            sessions.map((s) => s.id),
          );
        await deleteSessionRowsButEvents(tx, ids);
        await dropWeeklyPartition(tx, partition.name);
        await deleteSessions(tx, ids);
        return ids.length;
      });
      if (deleted === null) continue;
      result.dropped.push(partition.name);
      result.deletedSessions += deleted;
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      result.busy.push(partition.name);
    }
  }
  return result;
}
