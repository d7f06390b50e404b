import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { erasePersonIn, finishPersonErasure } from '../src/people/erasure.js';
import type { ErasurePlaceName } from '../workflows/person-erasure/contract.js';

/** The person erasure's activities: adapters over src/people/erasure.ts. */
export function createPersonErasureActivities(deps: { pool: DatabasePool }) {
  return {
    /** Searches one place, a batch at a time, heartbeating its position (a retry goes on from it): rows changed; null: finished already. */
    async erasePersonIn(erasureId: string, place: ErasurePlaceName): Promise<number | null> {
      const ctx = Context.current();
      const resumed = ctx.info.heartbeatDetails as { after: string; changed: number } | undefined;
      const changed = await erasePersonIn(deps.pool, erasureId, place, {
        after: resumed?.after ?? null,
        progress: (after, n) => ctx.heartbeat({ after, changed: (resumed?.changed ?? 0) + n }),
      });
      return changed === null ? null : (resumed?.changed ?? 0) + changed;
    },
    async finishPersonErasure(erasureId: string): Promise<void> {
      await finishPersonErasure(deps.pool, erasureId);
    },
  };
}

export type PersonErasureActivities = ReturnType<typeof createPersonErasureActivities>;
