import { randomUUID } from 'node:crypto';

/**
 * What a process announces when one of its sender calls begins (`untilMs`: the latest it can still
 * run, its start-to-close timeout) and ends (`untilMs` 0), on WEBHOOK_SENDER_CHANNEL.
 */
export interface SenderPresence {
  endpointId: string;
  processId: string;
  untilMs: number;
}

/** The announcement's payload (NOTIFY's text), and back: null for anything else. */
export function presencePayload(a: SenderPresence): string {
  return JSON.stringify([a.endpointId, a.processId, a.untilMs]);
}

export function parsePresence(payload: string): SenderPresence | null {
  try {
    const v: unknown = JSON.parse(payload);
    if (!Array.isArray(v) || v.length !== 3) return null;
    const [endpointId, processId, untilMs] = v as unknown[];
    if (typeof endpointId !== 'string' || typeof processId !== 'string' || typeof untilMs !== 'number') return null;
    return { endpointId, processId, untilMs };
  } catch {
    return null;
  }
}

/**
 * Wakes of sender calls running in this process (issue 31, decision 0188). A call of
 * `sendDueWebhooks` that finds nothing due lingers a moment, waiting here, instead of returning to
 * its workflow at once; the webhook waker (src/webhooks/waker.ts) of the same process offers each
 * endpoint's wake here first, and signals the endpoint's workflow only when no call of it runs in
 * this process. Under a steady stream a call then runs for its whole budget: no workflow task per
 * wake and no workflow round trip per momentary empty queue (measured at 11 to 14 s each on a
 * saturated machine, where every workflow task queues behind the agent sessions').
 *
 * It also knows the calls running in the deployment's other processes (`elsewhere`, from their
 * announcements on WEBHOOK_SENDER_CHANNEL): every worker's waker hears every notification, so the
 * process running an endpoint's call answers the endpoint's wakes itself, and the others do not
 * signal its workflow meanwhile (decision 0218: a signal per notification batch from each other
 * worker grew a busy endpoint's history by about 17 events a second, until a worker's death left
 * its workflow tasks replaying more than their 10 s allowed).
 */
export class WebhookWakes {
  /** This process, as its announcements name it. */
  readonly processId: string;
  /** Endpoints with a call running here, and whether a wake came since the call last looked. */
  private readonly calls = new Map<string, { count: number; pending: boolean; waiters: Set<() => void> }>();
  /** Calls announced by other processes: endpoint, the announcing process, and until when it may run (epoch ms). */
  private readonly elsewhere = new Map<string, { processId: string; untilMs: number }>();

  private readonly now: () => number;

  constructor(o: { processId?: string; now?: () => number } = {}) {
    this.processId = o.processId ?? randomUUID();
    this.now = o.now ?? Date.now;
  }

  /**
   * A call of the endpoint runs here until `leave` is called; `leave` answers whether a wake came
   * since the call's last `take` (no look of the call answered it: its workflow is to call again).
   */
  enter(endpointId: string): { leave(): boolean; take(): void; wait(ms: number, signal?: AbortSignal): Promise<boolean> } {
    let call = this.calls.get(endpointId);
    if (!call) this.calls.set(endpointId, (call = { count: 0, pending: false, waiters: new Set() }));
    call.count++;
    const state = call;
    let left = false;
    return {
      leave: () => {
        if (left) return false;
        left = true;
        if (--state.count === 0) this.calls.delete(endpointId);
        return state.pending;
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

  /**
   * An announcement of another process (see SenderPresence): its call of the endpoint runs until
   * `untilMs`, or ended (`untilMs` 0). This process's own announcements are ignored.
   */
  noteAnnouncement(a: SenderPresence): void {
    if (a.processId === this.processId) return;
    const known = this.elsewhere.get(a.endpointId);
    if (a.untilMs > this.now()) this.elsewhere.set(a.endpointId, { processId: a.processId, untilMs: a.untilMs });
    else if (known?.processId === a.processId) this.elsewhere.delete(a.endpointId);
  }

  /** A call of the endpoint runs in another process, as far as its announcements tell. */
  runsElsewhere(endpointId: string): boolean {
    const known = this.elsewhere.get(endpointId);
    if (!known) return false;
    if (known.untilMs > this.now()) return true;
    this.elsewhere.delete(endpointId);
    return false;
  }

  /** Forgets the announcements past their time (the waker calls it now and then: bounded memory). */
  prune(): void {
    const now = this.now();
    for (const [endpointId, known] of this.elsewhere) if (known.untilMs <= now) this.elsewhere.delete(endpointId);
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
