/**
 * The pace of a worker's routine workflow signals (decision 0201). A routine signal (a session's
 * workflow told of its progress, at most every AGENT_WORKFLOW_SIGNAL_SECONDS) starts the workflow
 * when it is not running, and a workflow start costs the worker and the Temporal server far more
 * than the drain of a turn: a burst of new sessions would have the drainer's processing wait
 * behind a thousand workflow starts. The pacer gives each routine signal a slot, at most
 * `perSecond` of them a second (with a second's worth at once after a quiet spell): a signal
 * whose slot is later is deferred to it, the session's turn left due and its wake set for then, so
 * that processing never waits for the signals and the workflows start as fast as the budget lets.
 * The slot is kept for the session: when its wake comes, the signal goes without taking another.
 */
export class TellPacer {
  /** When the next slot is free (epoch ms). */
  private next = 0;
  /** Sessions deferred to their slot (epoch ms), until they come back for it. */
  private readonly slots = new Map<string, number>();
  private pruned = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Milliseconds until the session's signal may go: 0 to send it now, or the wait to defer it by
   * (its slot is kept for it). With no budget (`perSecond` 0), always 0.
   */
  slot(sessionId: string): number {
    if (!(this.perSecond > 0)) return 0;
    const now = this.now();
    this.prune(now);
    const kept = this.slots.get(sessionId);
    if (kept !== undefined) {
      if (kept - now <= EARLY_MS) {
        this.slots.delete(sessionId);
        return 0;
      }
      return kept - now;
    }
    // A second's worth of slots may go at once after a quiet spell (the bucket's depth).
    const at = Math.max(this.next, now - 1000);
    this.next = at + 1000 / this.perSecond;
    if (at - now <= EARLY_MS) return 0;
    this.slots.set(sessionId, at);
    return at - now;
  }

  /** Sessions deferred now, waiting for their slot. */
  get deferred(): number {
    return this.slots.size;
  }

  /** Slots a minute past are dropped: their session came back on another worker, or was deleted. */
  private prune(now: number): void {
    if (now - this.pruned < 10_000) return;
    this.pruned = now;
    for (const [id, at] of this.slots) if (at < now - 60_000) this.slots.delete(id);
  }
}

/** A slot this close counts as come: the drainer's claims are no more precise than this. */
const EARLY_MS = 100;
