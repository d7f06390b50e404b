import {
  createPool,
  SchemaValidationError,
  type DatabasePool,
  type DatabaseTransactionConnection,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';
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
  return createPool(url, {
    interceptors: [resultParser],
    typeParsers: [int8, timestamptz, date],
    maxPoolSize: options.poolSize ?? 10,
    statementTimeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeout: 5_000,
    idleTimeout: 10_000,
    // Slonik's default runs DISCARD ALL after every implicit query: a second round trip each time.
    // No code of ours leaves session state behind (no SET, temporary tables, session locks or
    // LISTEN through this pool), so connections go back to the pool as they are.
    resetConnection: async () => undefined,
  });
}
