import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tx } from '../pool.js';
import type { IdRange } from '../../domain/event-partitions.js';
import { deleteSessionsDerivedRows, doomedSession } from './agent-sessions.js';

// The weekly partitions of agent_events and the legacy partition's window constraint (decision 0216,
// migration 0039). Identifiers below are made here from dates and validated names, never from input.

const LEGACY = 'agent_events_legacy';
const WINDOW_PREFIX = 'agent_events_legacy_window_';
const NAME = /^[a-z][a-z0-9_]{0,62}$/;

function identifier(name: string) {
  if (!NAME.test(name)) throw new Error(`not a partition or constraint name: ${name}`);
  return sql.identifier([name]);
}

const uuidLiteral = (id: string) => sql.fragment`${id}::uuid`;

/** The ids from `low` to `high`, but `legacyIds` (which the legacy partition keeps). */
export interface IdWindow {
  low: string;
  high: string;
  legacyIds: string[];
}

export interface PartitionWindow extends IdWindow {
  /** An extension planned (its constraint added) and not attached yet: up to `high`, around `legacyIds`. */
  pending: { high: string; legacyIds: string[]; constraint: string } | null;
}

/** The range the weekly partitions cover, the legacy ids inside it, and an extension under way (null: none planned yet). */
export async function readPartitionWindow(db: CommonQueryMethods): Promise<PartitionWindow | null> {
  const row = await db.maybeOne(sql.type(
    z.object({
      low: z.string(),
      high: z.string(),
      legacy_ids: z.array(z.string()),
      pending_high: z.string().nullable(),
      pending_legacy_ids: z.array(z.string()).nullable(),
      pending_constraint: z.string().nullable(),
    }),
  )`
    SELECT low, high, legacy_ids, pending_high, pending_legacy_ids, pending_constraint FROM agent_event_partition_window`);
  if (!row) return null;
  const pending =
    row.pending_high && row.pending_legacy_ids && row.pending_constraint
      ? { high: row.pending_high, legacyIds: row.pending_legacy_ids, constraint: row.pending_constraint }
      : null;
  return { low: row.low, high: row.high, legacyIds: row.legacy_ids, pending };
}

export async function savePartitionWindow(tx: Tx, w: PartitionWindow): Promise<void> {
  const p = w.pending;
  await tx.query(sql.unsafe`
    INSERT INTO agent_event_partition_window (low, high, legacy_ids, pending_high, pending_legacy_ids, pending_constraint)
    VALUES (${w.low}, ${w.high}, ${sql.array(w.legacyIds, 'uuid')}, ${p?.high ?? null}, ${p ? sql.array(p.legacyIds, 'uuid') : null},
      ${p?.constraint ?? null})
    ON CONFLICT (singleton) DO UPDATE SET low = excluded.low, high = excluded.high, legacy_ids = excluded.legacy_ids,
      pending_high = excluded.pending_high, pending_legacy_ids = excluded.pending_legacy_ids,
      pending_constraint = excluded.pending_constraint, updated_at = now()`);
}

/** One maintainer at a time (worker starts and sweeps may overlap); held to the transaction's end. */
export async function takeMaintainerLock(tx: Tx): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended('agent-event-partitions', 0))`);
}

/** A catalogue change waits at most this long for its lock, instead of queueing every ingest behind it. */
export async function limitLockWait(tx: Tx, milliseconds: number): Promise<void> {
  await tx.query(sql.unsafe`SELECT set_config('lock_timeout', ${`${milliseconds}ms`}, true)`);
}

/**
 * Holds off writes to the legacy partition (reads go on) until the transaction ends: between
 * reading the legacy ids of a range and adding the constraint that names them, none may arrive.
 */
export async function holdLegacyWrites(tx: Tx): Promise<void> {
  await tx.query(sql.unsafe`LOCK TABLE agent_events_legacy IN SHARE ROW EXCLUSIVE MODE`);
}

/** The distinct session ids the legacy partition holds in `range`, through its session index. */
export async function legacyIdsWithin(db: CommonQueryMethods, range: IdRange): Promise<string[]> {
  return [
    ...(await db.anyFirst(sql.type(z.object({ session_id: z.string() }))`
      SELECT DISTINCT session_id FROM agent_events_legacy
      WHERE session_id >= ${uuidLiteral(range.from)} AND session_id < ${uuidLiteral(range.to)}`)),
  ];
}

export function windowConstraintName(highDay: string): string {
  return `${WINDOW_PREFIX}${highDay}`;
}

/** The legacy partition's window constraints: their names and whether each is validated. */
export async function windowConstraints(db: CommonQueryMethods): Promise<readonly { name: string; valid: boolean }[]> {
  return db.any(sql.type(z.object({ name: z.string(), valid: z.boolean() }))`
    SELECT conname AS name, convalidated AS valid FROM pg_constraint
    WHERE conrelid = ${LEGACY}::regclass AND contype = 'c' AND starts_with(conname, ${WINDOW_PREFIX})`);
}

/**
 * The legacy partition holds no id of the window but `legacyIds`: NOT VALID (instant; new rows are
 * checked from now on), validated apart. One OR arm per legacy id, not `= ANY(array)`: the planner
 * proves a weekly piece disjoint from the legacy rows only arm by arm, so that attaching it needs no
 * scan of them (decision 0216).
 */
export async function addWindowConstraint(tx: Tx, name: string, w: IdWindow): Promise<void> {
  const arms = [
    sql.fragment`session_id < ${sql.literalValue(w.low)}::uuid`,
    sql.fragment`session_id >= ${sql.literalValue(w.high)}::uuid`,
    ...w.legacyIds.map((id) => sql.fragment`session_id = ${sql.literalValue(id)}::uuid`),
  ];
  await tx.query(sql.unsafe`ALTER TABLE agent_events_legacy DROP CONSTRAINT IF EXISTS ${identifier(name)}`);
  await tx.query(sql.unsafe`
    ALTER TABLE agent_events_legacy ADD CONSTRAINT ${identifier(name)} CHECK (${sql.join(arms, sql.fragment` OR `)}) NOT VALID`);
}

/** Scans the legacy rows against the constraint, online: writes go on (SHARE UPDATE EXCLUSIVE). */
export async function validateWindowConstraint(db: CommonQueryMethods, name: string): Promise<void> {
  await db.query(sql.unsafe`ALTER TABLE agent_events_legacy VALIDATE CONSTRAINT ${identifier(name)}`);
}

export async function dropWindowConstraint(tx: Tx, name: string): Promise<void> {
  await tx.query(sql.unsafe`ALTER TABLE agent_events_legacy DROP CONSTRAINT IF EXISTS ${identifier(name)}`);
}

export interface WeeklyPartition extends IdRange {
  name: string;
}

/** The partitions of agent_events but the legacy one, with their bounds, in id order. */
/** Whether a table of that name exists (a partition another maintainer may have dropped). */
export async function tableExists(db: CommonQueryMethods, name: string): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ exists: z.boolean() }))`SELECT to_regclass(quote_ident(${name})) IS NOT NULL AS exists`);
}

export async function weeklyPartitions(db: CommonQueryMethods): Promise<WeeklyPartition[]> {
  const rows = await db.any(sql.type(z.object({ name: z.string(), bound: z.string() }))`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'agent_events'::regclass AND c.relname <> ${LEGACY}`);
  const bound = /^FOR VALUES FROM \('([0-9a-f-]{36})'\) TO \('([0-9a-f-]{36})'\)$/;
  return rows
    .map((r) => {
      const m = bound.exec(r.bound);
      if (!m) throw new Error(`agent_events partition ${r.name} has an unexpected bound: ${r.bound}`);
      return { name: r.name, from: m[1]!, to: m[2]! };
    })
    .sort((a, b) => (a.from < b.from ? -1 : 1));
}

/**
 * Creates `name` with agent_events' columns and checks and attaches it for `range`: attaching takes
 * a SHARE UPDATE EXCLUSIVE lock of agent_events (ingest goes on) and builds the keys' indexes on the
 * empty table; the legacy partition is not scanned while its window constraint excludes the range.
 */
export async function attachWeeklyPartition(tx: Tx, name: string, range: IdRange): Promise<void> {
  await tx.query(sql.unsafe`CREATE TABLE ${identifier(name)} (LIKE agent_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await tx.query(sql.unsafe`
    ALTER TABLE agent_events ATTACH PARTITION ${identifier(name)}
    FOR VALUES FROM (${sql.literalValue(range.from)}) TO (${sql.literalValue(range.to)})`);
}

/** New sessions take time-ordered ids (once; altering the default takes agent_sessions' lock for an instant). */
export async function ensureTimeOrderedSessionIds(tx: Tx): Promise<boolean> {
  const current = await tx.oneFirst(sql.type(z.object({ d: z.string() }))`
    SELECT pg_get_expr(d.adbin, d.adrelid) AS d FROM pg_attrdef d
    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    WHERE d.adrelid = 'agent_sessions'::regclass AND a.attname = 'id'`);
  if (current === 'uuidv7()') return false;
  await tx.query(sql.unsafe`ALTER TABLE agent_sessions ALTER COLUMN id SET DEFAULT uuidv7()`);
  return true;
}

/** Whether any session with an id in `range` is not doomed (kept by its application's retention). */
export async function rangeHoldsKeptSession(db: CommonQueryMethods, range: IdRange): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ kept: z.boolean() }))`
    SELECT EXISTS (
      SELECT 1 FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
      WHERE s.id >= ${uuidLiteral(range.from)} AND s.id < ${uuidLiteral(range.to)} AND NOT ${doomedSession}) AS kept`);
}

/**
 * The sessions with an id in `range`, locked (an ingest of one waits), if every one of them is
 * doomed; null if one is not (an ingest refreshed it since).
 */
export async function lockDoomedRange(tx: Tx, range: IdRange): Promise<readonly { id: string; organization_id: string }[] | null> {
  const rows = await tx.any(sql.type(z.object({ id: z.string(), organization_id: z.string(), doomed: z.boolean() }))`
    SELECT s.id, s.organization_id, ${doomedSession} AS doomed FROM agent_sessions s JOIN agent_applications a ON a.id = s.application_id
    WHERE s.id >= ${uuidLiteral(range.from)} AND s.id < ${uuidLiteral(range.to)}
    ORDER BY s.application_id, s.external_session_id COLLATE "C"
    FOR UPDATE OF s`);
  return rows.every((r) => r.doomed) ? rows.map(({ id, organization_id }) => ({ id, organization_id })) : null;
}

/**
 * What a session's delete would cascade to, but its events: deleted (usage kept, its session id
 * cleared) before the partition is dropped, so that agent_events' lock is held only for the drop and
 * the sessions' own rows.
 */
export async function deleteSessionRowsButEvents(tx: Tx, sessionIds: readonly string[]): Promise<void> {
  if (!sessionIds.length) return;
  await deleteSessionsDerivedRows(tx, sessionIds);
  await tx.query(sql.unsafe`UPDATE usage_records SET session_id = NULL WHERE session_id = ANY(${sql.array([...sessionIds], 'uuid')})`);
}

/** Drops a weekly partition: its rows go at once, without a row deleted (an ACCESS EXCLUSIVE lock of agent_events for an instant). */
export async function dropWeeklyPartition(tx: Tx, name: string): Promise<void> {
  if (name === LEGACY) throw new Error('the legacy partition is never dropped');
  await tx.query(sql.unsafe`DROP TABLE ${identifier(name)}`);
}
