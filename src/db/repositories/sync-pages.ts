import { sql, type CommonQueryMethods, type FragmentSqlToken, type IdentifierSqlToken } from 'slonik';
import type { z } from 'zod';
import type { SyncPosition } from '../../domain/sync-cursor.js';

/**
 * Keyset pages over change positions (migration 0026, decision 0179), shared by the signals,
 * sessions and recordings lists. One statement takes the snapshot's xmin (the horizon) and the
 * rows below it, so that the horizon a caught-up cursor moves to is the one the rows were read
 * under: a later statement's horizon could pass a transaction that committed in between.
 */
export interface ChangeWindow {
  /** Rows strictly after this position (null: from the first). */
  after: SyncPosition | null;
  /** Only rows whose latest change happened at or after this instant (the first page of `updatedSince`). */
  since: string | null;
  /** Rows to fetch (one more than the page, to learn whether more wait). */
  limit: number;
}

export interface ChangePage<T> {
  rows: { row: T; position: SyncPosition }[];
  /** pg_snapshot_xmin of the statement's snapshot, as a decimal string. */
  horizon: string;
}

/** The conditions a table aliased `alias` adds to its WHERE (after its own filters, with AND). */
export function changeConditions(alias: IdentifierSqlToken, w: ChangeWindow): FragmentSqlToken {
  const after = w.after
    ? sql.fragment`AND (${alias}.change_xid, ${alias}.change_seq) > (${w.after.xid}::xid8, ${w.after.seq}::bigint)`
    : sql.fragment``;
  const since = w.since ? sql.fragment`AND ${alias}.changed_at >= ${w.since}::timestamptz` : sql.fragment``;
  return sql.fragment`${alias}.change_xid < sync.horizon ${after} ${since}`;
}

/** The position columns the inner SELECT lists first, and its ORDER BY and LIMIT. */
export const changeColumns = (alias: IdentifierSqlToken) =>
  sql.fragment`${alias}.change_xid AS sync_xid, ${alias}.change_seq::text AS sync_seq`;
export function changeOrder(alias: IdentifierSqlToken, w: ChangeWindow): FragmentSqlToken {
  // With `since`, the same order as a row value, which the position index cannot provide: the
  // planner then reads the rows through the (organization_id, changed_at) index and sorts them,
  // instead of walking the organization's whole history in position order and filtering on time
  // (which it prefers under a LIMIT, and which costs every row older than `since`).
  if (w.since) return sql.fragment`ORDER BY (${alias}.change_xid, ${alias}.change_seq) LIMIT ${w.limit}`;
  return sql.fragment`ORDER BY ${alias}.change_xid, ${alias}.change_seq LIMIT ${w.limit}`;
}

/**
 * Runs `inner` (a SELECT of `changeColumns` and the row's columns, filtered with
 * `changeConditions`, ordered with `changeOrder`; it may refer to `sync.horizon`) and parses each
 * row with `schema`.
 */
export async function changePage<S extends z.ZodType>(
  db: CommonQueryMethods,
  schema: S,
  inner: FragmentSqlToken,
): Promise<ChangePage<z.infer<S>>> {
  const raw = await db.any(sql.unsafe`
    WITH sync AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon)
    SELECT sync.horizon::text AS sync_horizon, page.* FROM sync LEFT JOIN LATERAL (${inner}) page ON true
    ORDER BY page.sync_xid, page.sync_seq::bigint`);
  const all = raw as readonly Record<string, unknown>[];
  const first = all[0];
  if (typeof first?.sync_horizon !== 'string') throw new Error('the change page returned no horizon');
  const rows = all
    .filter((r) => r.sync_xid !== null)
    .map(({ sync_horizon: _h, sync_xid, sync_seq, ...rest }) => ({
      row: schema.parse(rest),
      position: { xid: String(sync_xid), seq: String(sync_seq) },
    }));
  return { rows, horizon: first.sync_horizon };
}
