import { sleep } from '@temporalio/workflow';

/**
 * A timer that is armed once and never cancelled: it fires once and sets `fired`, which the main
 * loop consumes. The loop waits on `condition()` without a timeout, so a signal that wakes it
 * cancels nothing: no timer churn per ingest on the server, no cancellation failure in the worker.
 */
export class Alarm {
  private armed = false;
  private fired = false;

  /** Arms the alarm for `ms` from now unless it is already armed. */
  arm(ms: number): void {
    if (this.armed) return;
    this.armed = true;
    void sleep(Math.max(1, ms)).then(() => {
      this.armed = false;
      this.fired = true;
    });
  }

  get ringing(): boolean {
    return this.fired;
  }

  /** Whether it fired since the last call. */
  take(): boolean {
    const fired = this.fired;
    this.fired = false;
    return fired;
  }
}
