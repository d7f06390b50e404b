import type { DatabasePool } from 'slonik';
import { isLockTimeout } from '../dependency-errors.js';
import type { Logger } from '../logger.js';
import {
  addWeeks,
  compareUuids,
  dayStamp,
  piecesAround,
  timeOfUuid,
  uuidAtTime,
  weekPartitionName,
  weekStart,
} from '../domain/event-partitions.js';
import {
  addWindowConstraint,
  attachWeeklyPartition,
  dropWindowConstraint,
  ensureTimeOrderedSessionIds,
  holdLegacyWrites,
  legacyIdsWithin,
  limitLockWait,
  readPartitionWindow,
  savePartitionWindow,
  takeMaintainerLock,
  validateWindowConstraint,
  weeklyPartitions,
  windowConstraints,
  windowConstraintName,
  type PartitionWindow,
} from '../db/repositories/event-partitions.js';

/**
 * The partition maintainer (decision 0216): agent_events has a partition for every week from the
 * first one it made to `WEEKS_AHEAD` weeks after the current one, so that a new session's events
 * always have their week's partition. Run at worker start and by every retention sweep; it does
 * work only when fewer than `EXTEND_BELOW_WEEKS` weeks are left ahead, and then adds weeks up to
 * `WEEKS_AHEAD` ahead again.
 */
export const WEEKS_AHEAD = 4;
export const EXTEND_BELOW_WEEKS = 2;
/** How long a catalogue change of the maintainer waits for a lock before it gives up until its next run. */
export const MAINTAINER_LOCK_WAIT_MS = 5_000;

export interface ExtendOptions {
  now?: Date;
  /** The first week to cover when no partition exists yet (the data generator's history); default: this week. */
  from?: Date;
  weeksAhead?: number;
}

export interface ExtendResult {
  /** The partitions attached by this run, in id order. */
  attached: string[];
  /** The legacy sessions whose ids fall in the weeks added, left in the legacy partition. */
  legacyIdsKept: number;
  /** This run switched new sessions to UUIDv7 ids (the first run after migration 0039). */
  switchedToTimeOrderedIds: boolean;
  /** Each step's milliseconds (absent when there was nothing to do): the legacy ids read and the constraint added, its validation (the scan), the attaches. */
  stepsMs?: { plan: number; validate: number; attach: number };
}

/**
 * Adds the weeks up to `weeksAhead` after the current one, if fewer than EXTEND_BELOW_WEEKS are
 * left. Three transactions, each safe to repeat when a run stops part-way:
 * 1. with the legacy partition's writes held an instant, the legacy ids of the new weeks are read
 *    and a NOT VALID window constraint naming them is added;
 * 2. the constraint is validated: a scan of the legacy rows, with ingest going on;
 * 3. the older window constraint goes and each new week's partitions are attached (split around
 *    the legacy ids): the validated constraint proves the legacy rows are outside them, so nothing
 *    is scanned; then new sessions take UUIDv7 ids, if they did not yet.
 */
export async function extendEventPartitions(pool: DatabasePool, o: ExtendOptions = {}): Promise<ExtendResult> {
  const now = o.now ?? new Date();
  const thisWeek = weekStart(now);
  const end = addWeeks(thisWeek, (o.weeksAhead ?? WEEKS_AHEAD) + 1);
  const target = uuidAtTime(end);
  const enough = uuidAtTime(addWeeks(thisWeek, EXTEND_BELOW_WEEKS + 1));
  const covered = (w: PartitionWindow | null) => w !== null && w.pending === null && compareUuids(w.high, enough) >= 0;
  const nothing: ExtendResult = { attached: [], legacyIdsKept: 0, switchedToTimeOrderedIds: false };
  if (covered(await readPartitionWindow(pool))) return nothing;

  // 1. The plan: saved with its constraint, so that a run starting meanwhile (another replica) or the
  // next one after a stop part-way finishes it rather than plans another.
  const t0 = performance.now();
  const planned = await pool.transaction(async (tx) => {
    await takeMaintainerLock(tx);
    await limitLockWait(tx, MAINTAINER_LOCK_WAIT_MS);
    const current = await readPartitionWindow(tx);
    if (covered(current)) return null;
    if (current?.pending) return { pending: current.pending, added: 0 };
    const low = current?.low ?? uuidAtTime(weekStart(o.from ?? now));
    const high = current?.high ?? low;
    await holdLegacyWrites(tx);
    const added = await legacyIdsWithin(tx, { from: high, to: target });
    const pending = {
      high: target,
      legacyIds: [...new Set([...(current?.legacyIds ?? []), ...added])],
      constraint: windowConstraintName(dayStamp(end)),
    };
    await addWindowConstraint(tx, pending.constraint, { low, high: target, legacyIds: pending.legacyIds });
    await savePartitionWindow(tx, { low, high, legacyIds: current?.legacyIds ?? [], pending });
    return { pending, added: added.length };
  });
  if (!planned) return nothing;

  // 2. The scan, online; a second validation waits for the first and then has nothing to do.
  const t1 = performance.now();
  await validateWindowConstraint(pool, planned.pending.constraint);
  const t2 = performance.now();

  // 3. The attaches.
  const done = await pool.transaction(async (tx) => {
    await takeMaintainerLock(tx);
    await limitLockWait(tx, MAINTAINER_LOCK_WAIT_MS);
    const current = await readPartitionWindow(tx);
    if (!current?.pending) return nothing;
    const { pending } = current;
    const existing = new Set((await weeklyPartitions(tx)).map((p) => p.name));
    const attached: string[] = [];
    for (let week = timeOfUuid(current.high); compareUuids(uuidAtTime(week), pending.high) < 0; week = addWeeks(week, 1)) {
      const pieces = piecesAround({ from: uuidAtTime(week), to: uuidAtTime(addWeeks(week, 1)) }, pending.legacyIds);
      for (const [i, piece] of pieces.entries()) {
        const partition = weekPartitionName(week, i);
        if (existing.has(partition)) continue;
        await attachWeeklyPartition(tx, partition, piece);
        attached.push(partition);
      }
    }
    for (const { name } of await windowConstraints(tx)) if (name !== pending.constraint) await dropWindowConstraint(tx, name);
    await savePartitionWindow(tx, { low: current.low, high: pending.high, legacyIds: pending.legacyIds, pending: null });
    const switchedToTimeOrderedIds = await ensureTimeOrderedSessionIds(tx);
    return { attached, legacyIdsKept: planned.added, switchedToTimeOrderedIds };
  });
  const ms = (from: number, to: number) => Math.round(to - from);
  return { ...done, stepsMs: { plan: ms(t0, t1), validate: ms(t1, t2), attach: ms(t2, performance.now()) } };
}

/**
 * extendEventPartitions at a process's start (the API after its migrations, every worker): what it
 * attached is logged; a lock it could not get in time is a warning, and the retention sweep's next
 * run tries again (until then new sessions' events go to the legacy partition, as before 0.2).
 */
export async function prepareEventPartitions(pool: DatabasePool, logger: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  try {
    const result = await extendEventPartitions(pool);
    if (result.attached.length)
      logger.info(
        {
          attached: result.attached,
          legacyIdsKept: result.legacyIdsKept,
          timeOrderedIds: result.switchedToTimeOrderedIds,
          stepsMs: result.stepsMs,
        },
        'agent_events partitions attached',
      );
  } catch (error) {
    if (!isLockTimeout(error)) throw error;
    logger.warn({ err: error }, 'agent_events partitions not extended: a lock was busy (the retention sweep tries again)');
  }
}
