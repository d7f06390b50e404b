import type { DatabasePool } from 'slonik';
import { listenChannel } from '../db/listen.js';
import { WEBHOOK_WAKE_CHANNEL } from '../db/repositories/domain-events.js';
import { endpointsWithDueDeliveries } from '../db/repositories/webhook-deliveries.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { wakeWebhookEndpoint } from './endpoint-workflow.js';
import type { WebhookWakes } from './wakes.js';

export interface WebhookWakerOptions {
  databaseUrl: string;
  pool: DatabasePool;
  temporal: TemporalGateway;
  taskQueue: string;
  /** This process's sender calls: a wake goes to a call running here instead of a signal (decision 0188). */
  wakes?: WebhookWakes;
  /** Notifications are gathered this long, then each endpoint is woken once. */
  debounceMs?: number;
  /** The safety sweep's interval; it wakes endpoints with a delivery overdue by more than this. */
  sweepMs?: number;
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
 *   each endpoint is woken once per batch (signal-with-start of `webhook-endpoint/<id>`);
 * - a sweep every `sweepMs` wakes endpoints whose due delivery was not taken (a notification lost
 *   while this connection was down, a wake that failed, an endpoint enabled again): nothing waits
 *   longer than about two sweeps.
 * A wake is idempotent: several workers waking one endpoint only wake its one workflow. A wake of
 * an endpoint whose sender call runs in this process goes to that call (`wakes`), not to Temporal.
 */
export async function startWebhookWaker(o: WebhookWakerOptions): Promise<WebhookWaker> {
  const debounceMs = o.debounceMs ?? 50;
  const sweepMs = o.sweepMs ?? 15_000;
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const wakeAll = async (ids: Iterable<string>) => {
    await Promise.all(
      [...ids]
        .filter((id) => !o.wakes?.offer(id))
        .map((id) =>
          wakeWebhookEndpoint(o.temporal, o.taskQueue, id).catch((err: unknown) =>
            o.log?.warn({ err, endpointId: id }, 'webhook wake failed'),
          ),
        ),
    );
  };
  const flushPending = async () => {
    timer = undefined;
    const ids = [...pending];
    pending.clear();
    await wakeAll(ids);
  };
  const sweep = async () => {
    const ids = await endpointsWithDueDeliveries(o.pool, new Date(Date.now() - sweepMs), 1000);
    await wakeAll(ids);
  };

  // A lost connection is opened again; meanwhile the sweep covers what its notifications missed.
  const listener = await listenChannel({
    databaseUrl: o.databaseUrl,
    channel: WEBHOOK_WAKE_CHANNEL,
    onNotification: (endpointId) => {
      if (!endpointId) return;
      pending.add(endpointId);
      timer ??= setTimeout(() => void flushPending(), debounceMs);
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
      await listener.close();
    },
  };
}
