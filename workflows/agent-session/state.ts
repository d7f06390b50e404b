import { maxOrNull, type ProgressSnapshot, type StoredProgress } from '../../src/domain/agent-processing-plan.js';
import type { AgentSessionView, CarriedState, EventsIngested, Plan } from './contract.js';

const TERMINAL = new Set(['ended', 'abandoned']);

/**
 * One session's processing state (pure, unit-tested without Temporal).
 *
 * The watermark `processedThroughSequence` is contiguous: every sequence up to it has been
 * processed. A session's sequences start at 0 or 1. While the session is open, processing advances
 * through contiguous sequences and waits at the first gap; once it is `ended` or `abandoned` the
 * gaps are permanent, so processing goes through them to the end. Events at or below the watermark
 * that come back pending are revisions (or late arrivals below it) and are processed at once.
 */
export class SessionState {
  processedThroughSequence: number | null = null;
  highestSequence: number | null = null;
  status: CarriedState['status'] = 'open';
  processingStatus: CarriedState['processingStatus'] = 'pending';
  waitingFor: number | null = null;
  ingests = 0;
  /** Signalled since the pending events were last read. */
  dirty = true;

  constructor(carried?: CarriedState) {
    if (carried) Object.assign(this, carried);
  }

  get terminal(): boolean {
    return TERMINAL.has(this.status);
  }

  /** The stored session, read when a run starts: the database is the source of truth. */
  load(stored: StoredProgress): void {
    this.processedThroughSequence = maxOrNull(this.processedThroughSequence, stored.processedThroughSequence);
    this.highestSequence = maxOrNull(this.highestSequence, stored.highestSequence);
    if (!this.terminal) this.status = stored.status;
    if (stored.processingStatus === 'billing_blocked' || stored.processingStatus === 'capture_disabled')
      this.processingStatus = stored.processingStatus;
  }

  apply(signal: EventsIngested): void {
    this.highestSequence = maxOrNull(this.highestSequence, signal.highestSequence);
    // A terminal status is never left (ended sessions never reopen), also when signals arrive out of order.
    if (!this.terminal) this.status = signal.status;
    this.processingStatus = signal.processingStatus;
    this.ingests++;
    this.dirty = true;
  }

  /** What planning needs; the processing activity plans with it inside its transaction. */
  snapshot(): ProgressSnapshot {
    return { processedThroughSequence: this.processedThroughSequence, highestSequence: this.highestSequence, terminal: this.terminal };
  }

  /** The session as a processing pass found it stored (ingests within a pass do not signal). */
  adopt(stored: { status: CarriedState['status']; highestSequence: number | null }): void {
    this.highestSequence = maxOrNull(this.highestSequence, stored.highestSequence);
    if (!this.terminal) this.status = stored.status;
  }

  /** After the planned events were committed. */
  advance(plan: Pick<Plan, 'processedThroughSequence' | 'waitingFor'>): void {
    this.processedThroughSequence = maxOrNull(this.processedThroughSequence, plan.processedThroughSequence);
    this.waitingFor = plan.waitingFor;
  }

  /** Whether every known sequence has been processed. */
  get caughtUp(): boolean {
    return (
      this.highestSequence === null || (this.processedThroughSequence !== null && this.processedThroughSequence >= this.highestSequence)
    );
  }

  get view(): AgentSessionView {
    return {
      processedThroughSequence: this.processedThroughSequence,
      highestSequence: this.highestSequence,
      status: this.status,
      processingStatus: this.processingStatus,
      waitingForSequence: this.terminal ? null : this.waitingFor,
      ingests: this.ingests,
    };
  }

  carry(): CarriedState {
    return {
      processedThroughSequence: this.processedThroughSequence,
      highestSequence: this.highestSequence,
      status: this.status,
      processingStatus: this.processingStatus,
      ingests: this.ingests,
    };
  }
}
