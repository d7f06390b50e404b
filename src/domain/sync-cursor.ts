/**
 * The cursor of incremental sync (decision 0179): an opaque string that holds a change position
 * of one list. A position is (xid, seq): the id of the transaction that wrote a row's latest change
 * (xid8) and the sequence value stamped on it (migration 0026); rows are served in that order.
 *
 * Encoding: base64url of a small JSON object `{v, r, x, s}` (version, resource, xid, seq as
 * decimal strings). Not signed: a cursor only says where a client stands in its own
 * organization's data, and a forged one can only make that client skip or repeat its own rows.
 * It names its list, so a signals cursor sent to the sessions list is refused.
 */
export const SYNC_RESOURCES = ['signals', 'agent_sessions', 'recordings'] as const;
export type SyncResource = (typeof SYNC_RESOURCES)[number];

export interface SyncPosition {
  /** The writing transaction's id (xid8), as a decimal string. */
  xid: string;
  /** The change's sequence value (bigint), as a decimal string. */
  seq: string;
}

const VERSION = 1;
/** Longer than any cursor this module writes (about 110 characters); the query schema's maxLength. */
export const MAX_CURSOR_LENGTH = 256;
const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
const XID8_MAX = 2n ** 64n - 1n;
const BIGINT_MAX = 2n ** 63n - 1n;

function decimalWithin(value: unknown, max: bigint): value is string {
  return typeof value === 'string' && DECIMAL.test(value) && BigInt(value) <= max;
}

export function encodeCursor(resource: SyncResource, position: SyncPosition): string {
  if (!decimalWithin(position.xid, XID8_MAX) || !decimalWithin(position.seq, BIGINT_MAX)) {
    throw new Error(`not a change position: ${JSON.stringify(position)}`);
  }
  return Buffer.from(JSON.stringify({ v: VERSION, r: resource, x: position.xid, s: position.seq }), 'utf8').toString('base64url');
}

/** The position a cursor of `resource` holds, or null when it is not one this module wrote for that list. */
export function decodeCursor(resource: SyncResource, cursor: string): SyncPosition | null {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const o = parsed as Record<string, unknown>;
  if (Object.keys(o).length !== 4 || o.v !== VERSION || o.r !== resource) return null;
  if (!decimalWithin(o.x, XID8_MAX) || !decimalWithin(o.s, BIGINT_MAX)) return null;
  return { xid: o.x, seq: o.s };
}

/**
 * Where the next page starts. A full page (more rows wait) continues after its last row. A page
 * that took everything below the horizon (the snapshot's xmin: every transaction below it has
 * finished) continues from the horizon itself: any change not yet served is written by a
 * transaction at or above it, so its position is above (horizon, 0) (sequence values start at 1).
 */
export function nextPosition(page: {
  after: SyncPosition | null;
  hasMore: boolean;
  last: SyncPosition | null;
  horizon: string;
}): SyncPosition {
  if (page.hasMore && page.last) return page.last;
  const atHorizon = { xid: page.horizon, seq: '0' };
  // Never backwards (a cursor from a client ahead of this snapshot stays where it is).
  return page.after && comparePositions(page.after, atHorizon) > 0 ? page.after : atHorizon;
}

export function comparePositions(a: SyncPosition, b: SyncPosition): number {
  const x = BigInt(a.xid) - BigInt(b.xid);
  const d = x !== 0n ? x : BigInt(a.seq) - BigInt(b.seq);
  return d === 0n ? 0 : d > 0n ? 1 : -1;
}
