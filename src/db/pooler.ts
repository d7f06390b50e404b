import type { Config } from '../config.js';
import type { DatabasePool } from './pool.js';
import { unboundedTimeouts } from './repositories/schema-status.js';

/**
 * Behind a transaction pooler (`DATABASE_POOL_MODE=transaction`) Intake sends no timeouts: the
 * pooler's server connections carry them (its `connect_query`). A pool whose statements would run
 * unbounded is said at start, once, as a warning: it works, but a stuck statement holds a server
 * connection of the pooler for as long as it runs. A pool in session mode sends its own timeouts,
 * so there is nothing to check.
 */
export async function warnOfUnboundedPooler(
  pool: DatabasePool,
  database: Pick<Config['database'], 'poolMode'>,
  logger: { warn(meta: object, message: string): void },
): Promise<void> {
  if (database.poolMode !== 'transaction') return;
  const unbounded = await unboundedTimeouts(pool);
  if (unbounded.length)
    logger.warn(
      { unbounded },
      `the transaction pooler's server connections run without ${unbounded.join(' or ')}: set them in its connect_query (deploy/pgbouncer/pgbouncer.ini)`,
    );
}
