/** Rounds per run: the next scheduled run goes on where this one stopped. */
export const ROUNDS_PER_RUN = 20;

/**
 * The reconcilers' loop (session wakes, media ingestions): one activity call per round, a batch at
 * a time, until a round finds nothing more to do (`null`) or after ROUNDS_PER_RUN rounds. A round
 * returns the cursor the next one starts from.
 */
export async function reconcileInRounds<C>(first: C, round: (cursor: C) => Promise<{ next: C } | null>): Promise<void> {
  let cursor = first;
  for (let i = 0; i < ROUNDS_PER_RUN; i++) {
    const more = await round(cursor);
    if (!more) return;
    cursor = more.next;
  }
}
