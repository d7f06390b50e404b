import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';

/**
 * One batch of a scrub: rows of one organization whose text holds a string (an erased person's
 * e-mail) get it replaced, or are deleted. Batches follow the key (`after`: the last key of the
 * previous batch), so that a scrub of millions of rows goes in short transactions and resumes where
 * it stopped. The modules that own a table describe its scrub; this runs it.
 */
export interface ScrubTarget {
  /** The table changed. */
  table: string;
  /** The batches' key: a column of `table`, or of `parent` when the rows hang off a parent (a recording's utterances). */
  key: string;
  keyType: 'int8' | 'uuid' | 'text';
  /**
   * Keys come from this table (alias `t`), and `table.<fk>` refers to them. `scope` and the key then
   * follow an index of the parent (organization_id, key): a batch is a batch of the organization's
   * parents, whatever the size of the table.
   */
  parent?: { table: string; fk: string };
  /** The organization's rows (alias `t`: `table`, or `parent`). */
  scope: FragmentSqlToken;
  /** The rows to change (alias `c`: `table`). */
  match: FragmentSqlToken;
  /** The SET list (alias `c`); absent: matching rows are deleted. */
  set?: FragmentSqlToken;
}

export interface ScrubBatch {
  /** The batch's last key; null: the scrub went through every row. */
  last: string | null;
  changed: number;
}

const KEY_FORMS: Record<ScrubTarget['keyType'], RegExp> = {
  int8: /^-?\d{1,19}$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  text: /^/,
};

/** The rows of the target's table (alias `c`) under a batch of keys (an array) or the keys a subquery gives. */
function rowsUnder(target: ScrubTarget, keys: { batch: readonly string[] } | { query: FragmentSqlToken }): FragmentSqlToken {
  const column = sql.identifier(['c', target.parent?.fk ?? target.key]);
  return 'batch' in keys
    ? sql.fragment`${column} = ANY(${sql.array([...keys.batch], target.keyType)})`
    : sql.fragment`${column} IN (${keys.query})`;
}

export async function scrubBatch(db: CommonQueryMethods, target: ScrubTarget, after: string | null, limit: number): Promise<ScrubBatch> {
  const keyTable = sql.identifier([target.parent?.table ?? target.table]);
  const key = sql.identifier(['t', target.key]);
  // A key of another form (a scrub resumed across an upgrade that changed the place's key) starts the
  // place again: rows scrubbed already no longer match, so nothing is changed or counted twice.
  const start = after !== null && KEY_FORMS[target.keyType].test(after) ? after : null;
  const from = start === null ? sql.fragment`` : sql.fragment`AND ${key} > ${start}::${sql.identifier([target.keyType])}`;
  const keys = await db.anyFirst(sql.type(z.object({ k: z.string() }))`
    SELECT ${key}::text AS k FROM ${keyTable} t WHERE ${target.scope} ${from} ORDER BY ${key} LIMIT ${limit}`);
  if (!keys.length) return { last: null, changed: 0 };
  const table = sql.identifier([target.table]);
  const inBatch = rowsUnder(target, { batch: keys });
  const result = target.set
    ? await db.query(sql.unsafe`UPDATE ${table} c SET ${target.set} WHERE ${inBatch} AND ${target.match}`)
    : await db.query(sql.unsafe`DELETE FROM ${table} c WHERE ${inBatch} AND ${target.match}`);
  return { last: keys.length < limit ? null : (keys.at(-1) ?? null), changed: result.rowCount };
}

/** How many rows a scrub would change (or delete): the whole target at once, for a preview. */
export async function countScrubTarget(db: CommonQueryMethods, target: ScrubTarget): Promise<number> {
  const keyTable = sql.identifier([target.parent?.table ?? target.table]);
  const table = sql.identifier([target.table]);
  const keys = sql.fragment`SELECT ${sql.identifier(['t', target.key])} FROM ${keyTable} t WHERE ${target.scope}`;
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM ${table} c WHERE ${rowsUnder(target, { query: keys })} AND ${target.match}`);
}

/** A needle for `contains`: the string as PostgreSQL's lower() has it. */
export interface Needle {
  /** lower(needle) */
  lower: string;
  /** A case-insensitive regular expression matching the string literally. */
  pattern: string;
}

export function needleOf(text: string): Needle {
  return { lower: text.toLowerCase(), pattern: text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') };
}

/** Whether the text (any expression; jsonb is read as its text) holds the needle, in any case. */
export function contains(expression: FragmentSqlToken, needle: Needle): FragmentSqlToken {
  return sql.fragment`position(${needle.lower} in lower((${expression})::text)) > 0`;
}

/** The text with every occurrence of the needle, in any case, replaced by `[erased]`. */
export function scrubbedText(expression: FragmentSqlToken, needle: Needle): FragmentSqlToken {
  return sql.fragment`regexp_replace(${expression}, ${needle.pattern}, '[erased]', 'gi')`;
}

/** The JSON document with every occurrence of the needle replaced (an e-mail holds nothing JSON escapes). */
export function scrubbedJson(expression: FragmentSqlToken, needle: Needle): FragmentSqlToken {
  return sql.fragment`regexp_replace((${expression})::text, ${needle.pattern}, '[erased]', 'gi')::jsonb`;
}

/** A key column and the columns it is unique within, as in `UNIQUE (application_id, external_session_id)`. */
export interface UniqueKey {
  table: string;
  column: string;
  within: readonly string[];
}

/** Whether another row of the key's scope holds `value` (alias `o`). */
function heldByAnother(key: UniqueKey, value: FragmentSqlToken, of: (column: FragmentSqlToken) => FragmentSqlToken): FragmentSqlToken {
  const same = key.within.map((column) => sql.fragment`o.${sql.identifier([column])} = c.${sql.identifier([column])}`);
  return sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([key.table])} o
    WHERE ${sql.join(same, sql.fragment` AND `)} AND o.id <> c.id AND ${of(sql.fragment`o.${sql.identifier([key.column])}`)} = ${value})`;
}

/**
 * `erased:<the row's id>`; when another row of the key's scope holds that already (integrators see
 * row ids and may send `erased:<id>` themselves: issue 50), a random UUID is appended, so that the
 * UPDATE never breaks the key and the erasure never retries on it forever.
 */
function erasedValue(key: UniqueKey): FragmentSqlToken {
  const candidate = sql.fragment`'erased:' || c.id`;
  return sql.fragment`(${candidate} || CASE WHEN ${heldByAnother(key, candidate, (o) => o)} THEN ':' || gen_random_uuid() ELSE '' END)`;
}

/**
 * An identifier that is a key (a session's external id, a record's) and holds the needle becomes
 * `erased:<the row's id>` (see erasedValue): unique still, and nothing of the address left. Sent
 * again, the old identifier names nothing: a new session or record. Once changed it no longer
 * matches, so a batch run again (a retried activity) leaves it as it is.
 */
export function erasedIdentifier(needle: Needle, key: UniqueKey): FragmentSqlToken {
  const column = sql.identifier(['c', key.column]);
  return sql.fragment`CASE WHEN ${contains(sql.fragment`${column}`, needle)} THEN ${erasedValue(key)} ELSE ${column} END`;
}

/**
 * A key that other rows quote as text (an event's external id: its signals, a feedback event's
 * target, webhook bodies): the needle replaced by `[erased]` as in those rows, so that they still
 * name it; `erased:<the row's id>` instead where another row of the scope has, or gets, the same text.
 */
export function scrubbedKey(needle: Needle, key: UniqueKey): FragmentSqlToken {
  const column = sql.fragment`${sql.identifier(['c', key.column])}`;
  const text = scrubbedText(column, needle);
  const taken = heldByAnother(key, text, (o) => scrubbedText(o, needle));
  return sql.fragment`CASE WHEN ${contains(column, needle)} THEN CASE WHEN ${taken} THEN ${erasedValue(key)} ELSE ${text} END ELSE ${column} END`;
}
