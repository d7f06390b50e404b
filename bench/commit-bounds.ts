/**
 * Bounds on when each row of a bigserial table committed, from polls of the ids above the lowest one
 * not seen yet (bench/webhook-delivery.ts): ids are allocated in insert order but commit in any
 * order, so a row committed after the start of the last poll that did not see it (`after`) and
 * before the answer of the first poll that did (`by`). A gap in the ids (a rolled-back insert) is
 * given up after `holeMs`; a row committed even later has no bounds.
 */
export class CommitBounds {
  readonly seen = new Map<number, { after: number; by: number }>();
  /** Every id up to this one is seen (or given up): the next poll asks for the ids above it. */
  low = 0;
  private max = 0;
  private previousStart = 0;
  private readonly holeSince = new Map<number, number>();

  constructor(private readonly holeMs: number) {}

  /** One poll: it started at `start`, answered at `end` with `ids` (every committed id above `low`). */
  poll(start: number, end: number, ids: readonly number[]): void {
    for (const id of ids) {
      if (!this.seen.has(id)) this.seen.set(id, { after: this.previousStart, by: end });
      this.max = Math.max(this.max, id);
    }
    this.previousStart = start;
    for (;;) {
      const next = this.low + 1;
      if (this.seen.has(next)) {
        this.low = next;
        this.holeSince.delete(next);
        continue;
      }
      if (next < this.max) {
        const since = this.holeSince.get(next) ?? end;
        this.holeSince.set(next, since);
        if (end - since > this.holeMs) {
          this.low = next;
          this.holeSince.delete(next);
          continue;
        }
      }
      break;
    }
  }
}
