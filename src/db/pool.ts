import {
  createPool,
  SchemaValidationError,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.js';

export type { DatabasePool };

/**
 * A repository function that runs several statements which must hold together takes this, not a
 * pool: its caller opens the transaction (`pool.transaction(async (tx) => ...)`) and decides what
 * else commits with it (an outbox event, another table's write).
 */
export type Tx = DatabaseTransactionConnection;

/**
 * Rows are validated against the query's schema when one is given with `sql.type(schema)`
 * (Slonik 49 does not validate by default).
 */
const resultParser: Interceptor = {
  name: 'intake-result-parser',
  transformRowAsync: async (ctx, query, row) => {
    if (!ctx.resultParser) return row;
    const result = await ctx.resultParser['~standard'].validate(row);
    if (result.issues) throw new SchemaValidationError(query, row, result.issues);
    return result.value as QueryResultRow;
  },
};

/** The schema of a prepared statement whose rows are not read (`sql.prepared` needs one). */
export const unreadRows = z.unknown();

/**
 * Named prepared statements (`sql.prepared(name, schema)`, the hot statements of ingest and
 * processing): PostgreSQL parses each once per connection and can keep its plan (decision 0210,
 * fourth part). `pg` prepares a name once per connection and refuses the same name with another
 * text, and a statement's text varies with its fragments (a lock's SKIP LOCKED, an optional
 * filter): the name sent is the given one with a hash of the text, so each variant is a statement
 * of its own. Names stay within PostgreSQL's 63 bytes. Statements named this way list their result
 * columns (no `*`): a migration that adds a column would otherwise change a prepared statement's
 * result type, which PostgreSQL refuses on the connections that prepared it.
 */
const preparedNames = new Map<string, string>();
const statementNames: Interceptor = {
  name: 'intake-statement-names',
  transformQuery: (_ctx, query) => {
    if (!query.name) return query;
    const key = `${query.name}\u0000${query.sql}`;
    let name = preparedNames.get(key);
    if (name === undefined) {
      name = `${query.name.slice(0, 40)}_${createHash('sha1').update(query.sql).digest('hex').slice(0, 12)}`;
      // The texts are the repositories' templates: a few hundred at most; the bound is a safety net.
      if (preparedNames.size > 10_000) preparedNames.clear();
      preparedNames.set(key, name);
    }
    return { ...query, name };
  },
};

/** int8 as a JS number (ids and counters stay far below 2^53); refuses to lose precision. */
const int8 = {
  name: 'int8',
  parse: (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error(`int8 value out of the safe integer range`);
    return n;
  },
};
/** timestamptz as an ISO 8601 UTC string: the shape every response uses. */
const timestamptz = { name: 'timestamptz', parse: (value: string) => new Date(value).toISOString() };
/** date stays its calendar string (YYYY-MM-DD). */
const date = { name: 'date', parse: (value: string) => value };

export async function createDatabasePool(url: string, options: Partial<Config['database']> = {}): Promise<DatabasePool> {
  // A transaction pooler refuses timeouts in the startup packet (PgBouncer: "unsupported startup
  // parameter"): it sets them on its server connections itself (deploy/pgbouncer/pgbouncer.ini).
  const pooled = options.poolMode === 'transaction';
  return createPool(url, {
    interceptors: [statementNames, resultParser],
    typeParsers: [int8, timestamptz, date],
    maxPoolSize: options.poolSize ?? 10,
    statementTimeout: pooled ? 'DISABLE_TIMEOUT' : (options.statementTimeoutMs ?? 30_000),
    idleInTransactionSessionTimeout: pooled ? 'DISABLE_TIMEOUT' : 60_000,
    connectionTimeout: 5_000,
    idleTimeout: 10_000,
    // Slonik's default runs DISCARD ALL after every implicit query: a second round trip each time.
    // No code of ours leaves session state behind (no SET, temporary tables, session locks or
    // LISTEN through this pool), so connections go back to the pool as they are.
    resetConnection: async () => undefined,
  });
}
