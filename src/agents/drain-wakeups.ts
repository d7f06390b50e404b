import { setTimeout as sleep } from 'node:timers/promises';
import { listenChannel, type ChannelListener } from '../db/listen.js';
import { SESSION_WAKE_CHANNEL } from '../db/repositories/agent-sessions.js';

/**
 * After a wake (a notification, a deferral falling due, a batch that found work), the drainer looks
 * every AGENT_DRAIN_POLL_MS for this long before it waits for the next notification. It is longer
 * than an ingest writer's notification pace (NOTIFY_EVERY_MS): an ingest that did not notify,
 * because its writer had just done so, commits while the drainer still looks (decision 0210).
 */
export const HOT_MS = 1000;

/**
 * What wakes a worker's idle session drainer (decision 0210): the ingests' notifications on
 * SESSION_WAKE_CHANNEL (one listening connection per worker process, for every shard run it
 * holds), and the wakes this process deferred falling due. While nothing wakes it, the drainer
 * looks only every AGENT_DRAIN_IDLE_POLL_MS, the safety net for a notification lost while the
 * listener reconnects or a wake another process deferred.
 */
export class DrainWakeups {
  private readonly waiters = new Set<() => void>();
  private listener: ChannelListener | undefined;
  /** When the last wake came (ms since the epoch). */
  lastWake = 0;

  /** Listens on the channel (a connection of its own); a reconnect counts as a wake (notifications may have been missed). */
  async listen(databaseUrl: string, log?: { warn(meta: object, message: string): void }): Promise<void> {
    this.listener = await listenChannel({
      databaseUrl,
      channel: SESSION_WAKE_CHANNEL,
      onNotification: () => this.poke(),
      onConnect: () => this.poke(),
      ...(log ? { log } : {}),
    });
  }

  async close(): Promise<void> {
    await this.listener?.close();
    this.listener = undefined;
  }

  /** A wake: every waiting lane looks now. */
  poke(): void {
    this.lastWake = Date.now();
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiting) resolve();
  }

  /** A wake this process deferred falls due after `ms`. */
  pokeIn(ms: number): void {
    setTimeout(() => this.poke(), Math.max(0, ms)).unref();
  }

  /** Whether a wake came in the last HOT_MS. */
  hot(now = Date.now()): boolean {
    return now - this.lastWake < HOT_MS;
  }

  /** Resolves at the next wake, after `ms`, or when `signal` aborts. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.waiters.add(resolve);
    try {
      await Promise.race([promise, sleep(ms, undefined, { signal }).catch(() => undefined)]);
    } finally {
      this.waiters.delete(resolve);
    }
  }
}
