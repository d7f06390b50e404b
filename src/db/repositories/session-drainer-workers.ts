import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The workers of a task queue that say they are alive (session_drainer_workers): the session
 * drainer's shares are counted from them (src/agents/drainer-shards.ts).
 */

/**
 * Says `worker` is alive now and counts the workers seen within `withinSeconds`, itself included,
 * in one statement (an idle worker's only regular write, decision 0210); rows not refreshed for an
 * hour (workers gone) are removed on the way.
 */
export async function announceDrainerWorker(
  db: CommonQueryMethods,
  taskQueue: string,
  worker: string,
  withinSeconds: number,
): Promise<number> {
  // The statement's snapshot does not see its own insert: the others are counted, and this one added.
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`
    WITH gone AS (DELETE FROM session_drainer_workers WHERE seen_at < now() - interval '1 hour'),
      me AS (
        INSERT INTO session_drainer_workers (task_queue, worker) VALUES (${taskQueue}, ${worker})
        ON CONFLICT (task_queue, worker) DO UPDATE SET seen_at = now())
    SELECT 1 + count(*)::int AS count FROM session_drainer_workers
    WHERE task_queue = ${taskQueue} AND worker <> ${worker} AND seen_at > now() - ${withinSeconds} * interval '1 second'`);
}

/** A worker that stops says so: the others count without it at once. */
export async function withdrawDrainerWorker(db: CommonQueryMethods, taskQueue: string, worker: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM session_drainer_workers WHERE task_queue = ${taskQueue} AND worker = ${worker}`);
}
