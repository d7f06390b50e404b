import pLimit, { type LimitFunction } from 'p-limit';
import type { DatabasePool } from 'slonik';
import { TellPacer } from './tell-pacer.js';
import { DrainWakeups } from './drain-wakeups.js';
import { announceDrainerWorker, withdrawDrainerWorker } from '../db/repositories/session-drainer-workers.js';

/**
 * Session drainer shards (issue 34, decision 0199). A task queue has `shards` drainer workflows,
 * each draining the sessions of its bucket; each workflow's activity runs on whichever worker polls
 * it. A worker holds at most its share of them (shards over the live workers, rounded up): a run
 * beyond the share ends early ("yields") and its workflow calls again, so that the call lands on a
 * worker below its share. Workers count each other through PostgreSQL (session_drainer_workers),
 * each saying it is alive every `announceEveryMs`; one that stops (SIGKILL) is not counted after
 * `liveWithinSeconds`, and its runs, whose heartbeats stop, are retried by Temporal on the others.
 */

/** The most shards one worker holds when `liveWorkers` workers share `shards`. */
export function shardShare(shards: number, liveWorkers: number): number {
  return Math.ceil(shards / Math.max(1, liveWorkers));
}

export interface DrainerShardHostOptions {
  pool: DatabasePool;
  taskQueue: string;
  /** This worker's identity (Temporal's `pid@host`). */
  worker: string;
  /** The task queue's drainer shards (AGENT_DRAIN_SHARDS, the same on every worker). */
  shards: number;
  /** Batches this process works on at once, over all the shards it holds (AGENT_DRAIN_CONCURRENCY). */
  lanes: number;
  /** Routine workflow signals this process sends a second, over all the shards it holds (AGENT_WORKFLOW_SIGNALS_PER_SECOND; 0 or unset: no limit). */
  routineSignalsPerSecond?: number;
  /**
   * The database to LISTEN on for the ingests' wake notifications (decision 0210): the shard runs
   * here then wait for them while idle. Without it they look every AGENT_DRAIN_POLL_MS.
   */
  databaseUrl?: string;
  announceEveryMs?: number;
  liveWithinSeconds?: number;
  logger?: { warn(meta: Record<string, unknown>, message: string): void };
}

/** A shard's run on this worker: whether it may go on, and its end. */
export interface ShardRun {
  readonly keep: () => boolean;
  readonly leave: () => void;
}

/**
 * This process's side of the shards: the runs it holds, in the order they came (the latest beyond
 * the share yield), the live worker count, and the lanes and the signal pace all of its runs share.
 */
export class DrainerShardHost {
  private readonly runs: object[] = [];
  private live = 1;
  private timer: NodeJS.Timeout | undefined;
  /** Every batch of every shard run here takes one: the process's database connections stay bounded. */
  readonly lanes: LimitFunction;
  /** Every routine signal of every shard run here takes a slot: the worker's pace, whatever shards it holds. */
  readonly pacer: TellPacer;
  /** What wakes every shard run here while idle (set once it listens: `databaseUrl`). */
  wakeups: DrainWakeups | undefined;

  constructor(private readonly o: DrainerShardHostOptions) {
    this.lanes = pLimit(o.lanes);
    this.pacer = new TellPacer(o.routineSignalsPerSecond ?? 0);
  }

  /** Announces this worker now and every few seconds, and counts the live ones. */
  async start(): Promise<void> {
    if (this.o.databaseUrl) {
      const wakeups = new DrainWakeups();
      await wakeups.listen(this.o.databaseUrl, this.o.logger);
      this.wakeups = wakeups;
    }
    await this.announce();
    this.timer = setInterval(() => void this.announce(), this.o.announceEveryMs ?? 5000);
    this.timer.unref();
  }

  /** Stops announcing and withdraws: the other workers take this one's share at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.wakeups?.close();
    await withdrawDrainerWorker(this.o.pool, this.o.taskQueue, this.o.worker).catch(() => undefined);
  }

  private async announce(): Promise<void> {
    try {
      this.live = await announceDrainerWorker(this.o.pool, this.o.taskQueue, this.o.worker, this.o.liveWithinSeconds ?? 15);
    } catch (error) {
      // The last count stands: a database that does not answer stops the drain anyway.
      this.o.logger?.warn({ err: error }, 'could not announce this worker to the session drainer shards');
    }
  }

  /** The share this worker holds now. */
  share(): number {
    return shardShare(this.o.shards, this.live);
  }

  /** A shard run starting here; it keeps going while it is within this worker's share. */
  enter(): ShardRun {
    const token = {};
    this.runs.push(token);
    return {
      keep: () => {
        const at = this.runs.indexOf(token);
        return at !== -1 && at < this.share();
      },
      leave: () => {
        const at = this.runs.indexOf(token);
        if (at !== -1) this.runs.splice(at, 1);
      },
    };
  }
}
