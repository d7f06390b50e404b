/**
 * The contiguous-watermark rule of agent session processing (pure, no imports): shared by the
 * agent session workflow (its state) and the processing activity, which plans inside its
 * transaction. The workflow contract re-exports these types.
 */

export type SessionStatus = 'open' | 'ended' | 'abandoned';
export type ProcessingStatus = 'pending' | 'billing_blocked' | 'capture_disabled';

/** An event the workflow may process: its sequence and the revision it saw (never content). */
export interface EventRef {
  sequence: number;
  revision: number;
}

/** The session as stored, read when a run starts. Null when the session was deleted (retention). */
export interface StoredProgress {
  status: SessionStatus;
  processingStatus: ProcessingStatus | 'processing' | 'completed';
  processedThroughSequence: number | null;
  highestSequence: number | null;
}

/** What planning needs to know of the workflow's state. */
export interface ProgressSnapshot {
  processedThroughSequence: number | null;
  highestSequence: number | null;
  terminal: boolean;
}

export interface Plan {
  /** Events to process now, in sequence order. */
  process: EventRef[];
  /** The watermark once they are processed. */
  processedThroughSequence: number | null;
  /** The missing sequence processing stops at, when it stops at one. */
  waitingFor: number | null;
}

/** The larger of two optional sequences (null when both are). */
export function maxOrNull(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/**
 * Which pending events (sorted by sequence) may be processed now, and the watermark after them.
 * Open: through contiguous sequences, stopping at the first gap (sequences start at 0 or 1).
 * Terminal: through every gap. Pending events at or below the watermark are revisions and late
 * arrivals: always processed.
 */
export function planProcessing(at: ProgressSnapshot, pending: readonly EventRef[]): Plan {
  const watermark = at.processedThroughSequence;
  const below = pending.filter((e) => watermark !== null && e.sequence <= watermark);
  const above = pending.filter((e) => watermark === null || e.sequence > watermark);
  if (at.terminal) {
    return { process: [...below, ...above], processedThroughSequence: above.at(-1)?.sequence ?? watermark, waitingFor: null };
  }
  const run: EventRef[] = [];
  let expected = watermark === null ? Math.min(above[0]?.sequence ?? 0, 1) : watermark + 1;
  for (const event of above) {
    if (event.sequence !== expected) break;
    run.push(event);
    expected++;
  }
  const stoppedAtGap = run.length < above.length || (at.highestSequence !== null && expected <= at.highestSequence);
  return {
    process: [...below, ...run],
    processedThroughSequence: run.at(-1)?.sequence ?? watermark,
    waitingFor: stoppedAtGap ? expected : null,
  };
}
