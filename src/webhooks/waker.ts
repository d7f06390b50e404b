import type { DatabasePool } from 'slonik';
import { listenChannels } from '../db/listen.js';
import { WEBHOOK_WAKE_CHANNEL } from '../db/repositories/domain-events.js';
import { endpointsWithDueDeliveries, WEBHOOK_SENDER_CHANNEL } from '../db/repositories/webhook-deliveries.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { wakeWebhookEndpoint } from './endpoint-workflow.js';
import { parsePresence, type WebhookWakes } from './wakes.js';

/** At most one signal per endpoint from one process in this long (decision 0218). */
export const SIGNAL_INTERVAL_MS = 1_000;

export interface WebhookWakerOptions {
  databaseUrl: string;
  pool: DatabasePool;
  temporal: TemporalGateway;
  taskQueue: string;
  /**
   * This process's sender calls: a wake goes to a call running here instead of a signal (decision
   * 0188), and none is signalled while another process announces a call of the endpoint (decision 0218).
   */
  wakes?: WebhookWakes;
  /** Notifications are gathered this long, then each endpoint is woken once. */
  debounceMs?: number;
  /** The safety sweep's interval; it wakes endpoints with a delivery overdue by more than this. */
  sweepMs?: number;
  /** Signals to one endpoint's workflow from this process are at least this far apart; wakes meanwhile make one at its end. */
  signalIntervalMs?: number;
  /** Called for each signal sent (tests count them). */
  onSignal?: (endpointId: string) => void;
  log?: { warn(meta: object, message: string): void };
}

export interface WebhookWaker {
  /** Wakes the endpoints gathered so far and the sweep's (tests). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Wakes the senders of endpoints that have deliveries (issue 31), in every worker:
 * - LISTEN on the channel recordEvents notifies in the transaction that creates deliveries, so an
 *   event's sender is woken within milliseconds of its commit; notifications are debounced, and
 *   each endpoint is woken once per batch;
 * - a wake goes to the endpoint's call when one runs in this process (`wakes`: the call lingers for
 *   it, decision 0188); it is dropped when another process announces a call of the endpoint (every
 *   worker hears every notification: that process answers it); otherwise it signals the endpoint's
 *   workflow (signal-with-start of `webhook-endpoint/<id>`), at most once a `signalIntervalMs`
 *   from this process, the wakes meanwhile gathered into one signal at the interval's end
 *   (decision 0218: a signal is a history event and a workflow task);
 * - a sweep every `sweepMs` wakes endpoints whose due delivery was not taken (a notification lost
 *   while this connection was down, a wake that failed, an endpoint enabled again, a call that
 *   died): nothing waits longer than about two sweeps. The sweep's wakes signal even while another
 *   process announces a call.
 * A wake is idempotent: several workers waking one endpoint only wake its one workflow.
 */
export async function startWebhookWaker(o: WebhookWakerOptions): Promise<WebhookWaker> {
  const debounceMs = o.debounceMs ?? 50;
  const sweepMs = o.sweepMs ?? 15_000;
  const intervalMs = o.signalIntervalMs ?? SIGNAL_INTERVAL_MS;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  /** When this process last signalled each endpoint, and the wakes held for the interval's end. */
  const lastSignalAt = new Map<string, number>();
  /** Held wakes and where they came from (a sweep's keeps its bypass of the announcements). */
  const held = new Map<string, 'notification' | 'sweep'>();
  let heldTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const signal = (id: string) => {
    o.onSignal?.(id);
    return wakeWebhookEndpoint(o.temporal, o.taskQueue, id).catch((err: unknown) =>
      o.log?.warn({ err, endpointId: id }, 'webhook wake failed'),
    );
  };
  const wakeAll = async (ids: Iterable<string>, from: 'notification' | 'sweep') => {
    if (closed) return;
    const now = Date.now();
    const signals: string[] = [];
    for (const id of ids) {
      if (o.wakes?.offer(id)) continue;
      if (from === 'notification' && o.wakes?.runsElsewhere(id)) continue;
      const last = lastSignalAt.get(id);
      if (last !== undefined && now - last < intervalMs) {
        if (held.get(id) !== 'sweep') held.set(id, from);
        if (!heldTimer) {
          heldTimer = setTimeout(() => void releaseHeld(), intervalMs);
          heldTimer.unref();
        }
        continue;
      }
      lastSignalAt.set(id, now);
      signals.push(id);
    }
    await Promise.all(signals.map(signal));
  };
  const releaseHeld = async () => {
    heldTimer = undefined;
    const entries = [...held];
    held.clear();
    for (const from of ['sweep', 'notification'] as const)
      await wakeAll(
        entries.filter(([, f]) => f === from).map(([id]) => id),
        from,
      );
  };
  const flushPending = async () => {
    timer = undefined;
    const ids = [...pending];
    pending.clear();
    await wakeAll(ids, 'notification');
  };
  const sweep = async () => {
    const cutoff = Date.now() - intervalMs;
    for (const [id, at] of lastSignalAt) if (at < cutoff) lastSignalAt.delete(id);
    o.wakes?.prune();
    const ids = await endpointsWithDueDeliveries(o.pool, new Date(Date.now() - sweepMs), 1000);
    await wakeAll(ids, 'sweep');
  };

  // A lost connection is opened again; meanwhile the sweep covers what its notifications missed.
  // The other processes' calls are announced on the same connection. An announcement missed
  // meanwhile costs signals (a beginning) or leaves a call believed running until its timeout (an
  // end), whose process answers the wakes meanwhile.
  const wakes = o.wakes;
  const listener = await listenChannels({
    databaseUrl: o.databaseUrl,
    channels: {
      [WEBHOOK_WAKE_CHANNEL]: (endpointId) => {
        if (!endpointId) return;
        pending.add(endpointId);
        timer ??= setTimeout(() => void flushPending(), debounceMs);
      },
      ...(wakes
        ? {
            [WEBHOOK_SENDER_CHANNEL]: (payload: string) => {
              const presence = parsePresence(payload);
              if (presence) wakes.noteAnnouncement(presence);
            },
          }
        : {}),
    },
    ...(o.log ? { log: o.log } : {}),
  });
  const sweeper = setInterval(() => void sweep().catch((err: unknown) => o.log?.warn({ err }, 'webhook sweep failed')), sweepMs);
  sweeper.unref();

  return {
    async flush() {
      if (timer) clearTimeout(timer);
      await flushPending();
      await sweep();
    },
    async close() {
      clearInterval(sweeper);
      if (timer) clearTimeout(timer);
      await flushPending();
      closed = true;
      held.clear();
      if (heldTimer) clearTimeout(heldTimer);
      await listener.close();
    },
  };
}
