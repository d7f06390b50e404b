/**
 * Wakes of sender calls running in this process (issue 31, decision 0188). A call of
 * `sendDueWebhooks` that finds nothing due lingers a moment, waiting here, instead of returning to
 * its workflow at once; the webhook waker (src/webhooks/waker.ts) of the same process offers each
 * endpoint's wake here first, and signals the endpoint's workflow only when no call of it runs in
 * this process. Under a steady stream a call then runs for its whole budget: no workflow task per
 * wake and no workflow round trip per momentary empty queue (measured at 11 to 14 s each on a
 * saturated machine, where every workflow task queues behind the agent sessions').
 */
export class WebhookWakes {
  /** Endpoints with a call running here, and whether a wake came since the call last looked. */
  private readonly calls = new Map<string, { count: number; pending: boolean; waiters: Set<() => void> }>();

  /** A call of the endpoint runs here until `leave` is called. */
  enter(endpointId: string): { leave(): void; take(): void; wait(ms: number, signal?: AbortSignal): Promise<boolean> } {
    let call = this.calls.get(endpointId);
    if (!call) this.calls.set(endpointId, (call = { count: 0, pending: false, waiters: new Set() }));
    call.count++;
    const state = call;
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        if (--state.count === 0) this.calls.delete(endpointId);
      },
      /** The call is about to look for due deliveries: wakes so far are answered by that look. */
      take: () => {
        state.pending = false;
      },
      /** Resolves true on a wake (at once when one came since `take`), false after `ms` or on abort. */
      wait: (ms, signal) => {
        if (state.pending) {
          state.pending = false;
          return Promise.resolve(true);
        }
        if (signal?.aborted) return Promise.resolve(false);
        return new Promise<boolean>((resolve) => {
          const done = (woken: boolean) => {
            clearTimeout(timer);
            state.waiters.delete(wake);
            signal?.removeEventListener('abort', abort);
            if (woken) state.pending = false;
            resolve(woken);
          };
          const wake = () => done(true);
          const abort = () => done(false);
          const timer = setTimeout(() => done(false), ms);
          state.waiters.add(wake);
          signal?.addEventListener('abort', abort, { once: true });
        });
      },
    };
  }

  /** Hands a wake to a call of the endpoint running here; false when none runs here. */
  offer(endpointId: string): boolean {
    const call = this.calls.get(endpointId);
    if (!call) return false;
    call.pending = true;
    for (const wake of [...call.waiters]) wake();
    return true;
  }
}
