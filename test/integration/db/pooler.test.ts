import { strict as assert } from 'node:assert';
import pg from 'pg';
import { createDatabasePool } from '../../../src/db/pool.js';
import { unboundedTimeouts } from '../../../src/db/repositories/schema-status.js';
import { warnOfUnboundedPooler } from '../../../src/db/pooler.js';
import { createEmptyDatabase } from '../../../harness/stack.js';

/**
 * DATABASE_POOL_MODE=transaction: the pool sends no timeouts (a transaction pooler refuses them in
 * the startup packet), so the server's own settings rule, and a server without them is a warning.
 * PgBouncer itself, with deploy/pgbouncer/pgbouncer.ini, is exercised by the fleet test.
 */
describe('the pool behind a transaction pooler', () => {
  const warnings: { meta: object; message: string }[] = [];
  const logger = { warn: (meta: object, message: string) => void warnings.push({ meta, message }) };
  beforeEach(() => void warnings.splice(0));

  it('sends no timeouts, and warns when the server bounds neither statements nor open transactions', async () => {
    const pool = await createDatabasePool(await createEmptyDatabase(), { poolMode: 'transaction', statementTimeoutMs: 1234 });
    try {
      await warnOfUnboundedPooler(pool, { poolMode: 'transaction' }, logger);
      assert.equal(warnings.length, 1);
      assert.deepEqual(warnings[0]!.meta, { unbounded: ['statement_timeout', 'idle_in_transaction_session_timeout'] });
      assert.match(warnings[0]!.message, /without statement_timeout or idle_in_transaction_session_timeout: set them in its connect_query/);
    } finally {
      await pool.end();
    }
  });

  it('is silent when the server sets both, as the pooler’s connect_query does', async () => {
    const url = await createEmptyDatabase();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const name = pg.escapeIdentifier(new URL(url).pathname.slice(1));
    await admin.query(`ALTER DATABASE ${name} SET statement_timeout = '30s'`);
    await admin.query(`ALTER DATABASE ${name} SET idle_in_transaction_session_timeout = '60s'`);
    await admin.end();
    const pool = await createDatabasePool(url, { poolMode: 'transaction' });
    try {
      await warnOfUnboundedPooler(pool, { poolMode: 'transaction' }, logger);
      assert.deepEqual(warnings, []);
      assert.deepEqual(await unboundedTimeouts(pool), []);
    } finally {
      await pool.end();
    }
  });
});
