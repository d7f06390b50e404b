/**
 * The weekly partitions of agent_events (decision 0216), pure: which session ids a week's
 * partitions hold, and how a week is split around legacy ids. A UUIDv7's first 48 bits are its
 * creation time in milliseconds, and PostgreSQL orders uuids by their bytes, so the sessions created
 * in a week are the ids from the week's first millisecond (then zeros) to the next week's.
 *
 * Sessions created before 0.2 have random (v4) ids, spread over the whole range: the few that fall
 * in a week's range stay in the legacy partition, and that week is split into pieces around them.
 */

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/** The Monday 00:00 UTC that starts `at`'s week (ISO weeks). */
export function weekStart(at: Date): Date {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
  return new Date(day - sinceMonday * 24 * 60 * 60 * 1000);
}

export function addWeeks(at: Date, weeks: number): Date {
  return new Date(at.getTime() + weeks * WEEK_MS);
}

/** The smallest UUIDv7 of this millisecond: the lower bound of the ids created from then on. */
export function uuidAtTime(at: Date): string {
  const ms = at.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 2 ** 48) throw new RangeError(`no UUIDv7 time for ${at.toISOString()}`);
  return formatUuid(BigInt(ms) << 80n);
}

/** The creation time a UUIDv7 carries (for a v4 id: the meaningless time its random first bits say). */
export function timeOfUuid(id: string): Date {
  return new Date(Number(parseUuid(id) >> 80n));
}

/** The id right after `id` in PostgreSQL's uuid order. */
export function nextUuid(id: string): string {
  const next = parseUuid(id) + 1n;
  if (next >= 1n << 128n) throw new RangeError('no uuid follows the last one');
  return formatUuid(next);
}

/** One partition: the ids from `from` (included) to `to` (excluded). */
export interface IdRange {
  from: string;
  to: string;
}

/** PostgreSQL's uuid order (bytewise, which the canonical lower-case hex form keeps). */
export function compareUuids(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The pieces of `range` around the ids in `excluded` (legacy ids the legacy partition keeps): every
 * id of the range but those, in order, no piece empty.
 */
export function piecesAround(range: IdRange, excluded: readonly string[]): IdRange[] {
  const inside = [...new Set(excluded.map((x) => x.toLowerCase()))]
    .filter((x) => compareUuids(x, range.from) >= 0 && compareUuids(x, range.to) < 0)
    .sort(compareUuids);
  const pieces: IdRange[] = [];
  let from = range.from.toLowerCase();
  for (const x of inside) {
    if (compareUuids(from, x) < 0) pieces.push({ from, to: x });
    from = nextUuid(x);
  }
  if (compareUuids(from, range.to) < 0) pieces.push({ from, to: range.to.toLowerCase() });
  return pieces;
}

/** A UTC day as the partitions' and window constraints' names give it: `20261130`. */
export function dayStamp(day: Date): string {
  return day.toISOString().slice(0, 10).replaceAll('-', '');
}

/** A week's partition name (`agent_events_w20261130`), its pieces after the first `_1`, `_2`... */
export function weekPartitionName(week: Date, piece = 0): string {
  return `agent_events_w${dayStamp(week)}${piece ? `_${piece}` : ''}`;
}

function parseUuid(id: string): bigint {
  const hex = id.replaceAll('-', '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`not a uuid: ${id}`);
  return BigInt(`0x${hex}`);
}

function formatUuid(value: bigint): string {
  const h = value.toString(16).padStart(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
