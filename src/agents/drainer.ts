import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import { deferWake, deferWorkflowSignal, takeWorkflowSignalTurn } from '../db/repositories/agent-processing.js';
import { dueWakes } from '../db/repositories/agent-sessions.js';
import type { SignalExtractor } from '../providers/signal-extractor/types.js';
import { ANALYSIS_BATCH, analyseQueued, processPending, STORED_ONLY, type PassOptions } from './processing.js';
import type { Config } from '../config.js';
import type { SessionDrainerActivityResult } from '../../workflows/session-drainer/contract.js';
import { sessionWorkflowSettings, wakeTargetOf, type SessionWorkflowSettings, type WakeTarget } from './session-workflow.js';

/** The worker's drainer settings (configuration). */
export interface DrainerSettings {
  /** Sessions processed at once. */
  concurrency: number;
  /** While no wake is due, how long to wait before looking again. */
  pollMs: number;
  /** A session's workflow is told at most this often while nothing needs it (0: after every pass). */
  signalEverySeconds: number;
  /** How long one activity call runs before it returns (the workflow calls again), so that its history stays small. */
  runSeconds: number;
  /** How the session workflows it tells are started. */
  sessions: SessionWorkflowSettings;
}

export function drainerSettings(config: Pick<Config, 'agents' | 'temporal'>): DrainerSettings {
  return {
    concurrency: config.agents.drainConcurrency,
    pollMs: config.agents.drainPollMs,
    signalEverySeconds: config.agents.workflowSignalSeconds,
    runSeconds: 60,
    sessions: sessionWorkflowSettings(config),
  };
}

/** The worker's settings (concurrency, pollMs, signalEverySeconds, runSeconds) and what the drain uses. */
export interface DrainOptions extends Omit<DrainerSettings, 'sessions'> {
  pool: DatabasePool;
  extractor: SignalExtractor;
  analysisCreditCost: number;
  /** Tells the session's workflow (signal-with-start: it is started when not running). */
  tell: (target: WakeTarget) => Promise<void>;
  /** Called after every look at the queue and every session (the activity's heartbeat). */
  heartbeat: () => void;
  /** Stops taking sessions; those in progress finish their current transaction. */
  signal: AbortSignal;
  logger?: { warn(meta: Record<string, unknown>, message: string): void };
}

/** What one drain call did (the activity's result in the drainer's history). */
export type DrainResult = SessionDrainerActivityResult;

const PAGE = 500;
/** A workflow signal or a session drain that failed is tried again after this long, even with no new ingest. */
const SIGNAL_RETRY_SECONDS = 5;
/** Routine signals in flight at once, off the sessions' lanes (a lane waits only when this many are). */
const TELLS_IN_FLIGHT = 32;

/** Background tasks, at most `limit` at once: add() waits for a free place (back-pressure). */
class Bounded {
  private readonly pending = new Set<Promise<void>>();
  constructor(private readonly limit: number) {}

  async add(task: () => Promise<void>): Promise<void> {
    while (this.pending.size >= this.limit) await Promise.race(this.pending);
    const p: Promise<void> = task().finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}

interface Run {
  o: DrainOptions;
  totals: DrainResult;
  tells: Bounded;
}

/**
 * The session drainer: the worker's consumer of requested wakes (`agent_sessions.wake_requested_at`,
 * set by ingests in their own transaction). It processes each due session exactly as the session
 * workflow's pass does (`processPending`, page by page under the session's row lock, then the queued
 * analyses), with no Temporal call per ingest. The session's workflow keeps what only it does
 * (status in the Temporal UI, idle close, continue-as-new, waiting for credits or the provider): the
 * drainer tells it at once when it has work (the session ended, analyses wait) and otherwise at most
 * every `signalEverySeconds`. A crash anywhere loses nothing: the wake stays requested until a pass
 * that found nothing more to process takes it, and every write is idempotent.
 */
export async function drainSessionWakes(o: DrainOptions): Promise<DrainResult> {
  const totals: DrainResult = { sessions: 0, events: 0, analyses: 0, signals: 0 };
  const run: Run = { o, totals, tells: new Bounded(TELLS_IN_FLIGHT) };
  const deadline = Date.now() + o.runSeconds * 1000;
  const inFlight = new Set<string>();
  const running = new Set<Promise<void>>();
  const done = () => o.signal.aborted || Date.now() >= deadline;
  while (!done()) {
    const free = o.concurrency - inFlight.size;
    const due = free > 0 ? await dueWakes(o.pool, [...inFlight], free) : [];
    o.heartbeat();
    for (const id of due) {
      inFlight.add(id);
      const task = drainSession(run, id)
        .catch(async (error: unknown) => {
          o.logger?.warn({ err: error, sessionId: id }, 'session drain failed; its wake stays requested, looked at again shortly');
          await deferWake(o.pool, id, SIGNAL_RETRY_SECONDS).catch(() => undefined);
        })
        .finally(() => {
          inFlight.delete(id);
          running.delete(task);
        });
      running.add(task);
    }
    // A full batch: more may be due at once. Every slot busy: look again when one frees up. Else
    // nothing more is due now: look again after pollMs.
    if (free > 0 && due.length === free) continue;
    await Promise.race([sleep(o.pollMs, undefined, { signal: o.signal }).catch(() => undefined), ...(free === 0 ? running : [])]);
  }
  await Promise.all(running);
  await run.tells.settled();
  return totals;
}

/**
 * One session, until a pass under its lock finds nothing to process and no analysis queued (that
 * pass takes the wake): pending events page by page, then the queued analyses, then a pass again
 * (for what was ingested meanwhile). Analyses that must wait (credits, provider) go to the session's
 * workflow, which waits durably; the wake is taken only once the workflow was told.
 */
async function drainSession(run: Run, sessionId: string): Promise<void> {
  const { o, totals } = run;
  let told = false;
  for (;;) {
    const result = await passes(o, sessionId, totals, { holdWakeWhileQueued: true });
    if (!result) return;
    if (result.queued === 0) break;
    const analysed = await analyse(o, sessionId, totals);
    if (analysed === 'deleted' || o.signal.aborted) return;
    if (analysed === 'waiting') {
      if (!(await tell(run, sessionId, true))) return;
      told = true;
      await passes(o, sessionId, totals, {});
      break;
    }
  }
  totals.sessions++;
  if (!told) await tell(run, sessionId, false);
}

/** Passes until one is not full; null when the session was deleted. */
async function passes(o: DrainOptions, sessionId: string, totals: DrainResult, pass: PassOptions) {
  for (;;) {
    const result = await processPending(o.pool, sessionId, STORED_ONLY, PAGE, pass);
    if (result.deleted) return null;
    totals.events += result.processed;
    if (!result.more) return result;
  }
}

/** Runs the queued analyses until none is left ('done') or they must wait ('waiting'). */
async function analyse(o: DrainOptions, sessionId: string, totals: DrainResult): Promise<'done' | 'waiting' | 'deleted'> {
  for (;;) {
    const analysed = await analyseQueued(o.pool, sessionId, {
      extractor: o.extractor, creditCost: o.analysisCreditCost, ...ANALYSIS_BATCH,
      heartbeat: o.heartbeat, signal: o.signal,
    });
    totals.analyses += analysed.analysed;
    if (analysed.deleted) return 'deleted';
    if (analysed.billingBlocked || analysed.providerUnavailable) return 'waiting';
    if (analysed.remaining === 0 || o.signal.aborted) return 'done';
  }
}

/**
 * Tells the session's workflow when `force` or when its turn has come (a session that ended always
 * has it). A forced signal is sent before the session's wake may be taken: false when it failed. A
 * routine one goes out in the background, the lane moves on. Either way a failed signal has the
 * session looked at again shortly (deferWorkflowSignal); a process that dies before sending a
 * routine one leaves it to the session's next turn.
 */
async function tell(run: Run, sessionId: string, force: boolean): Promise<boolean> {
  const { o, totals } = run;
  const turn = await takeWorkflowSignalTurn(o.pool, sessionId, o.signalEverySeconds, force);
  if (!turn) return true;
  const send = async () => {
    try {
      await o.tell(wakeTargetOf({ id: sessionId, ...turn }));
      totals.signals++;
      return true;
    } catch (error) {
      o.logger?.warn({ err: error, sessionId }, 'could not tell the session workflow; trying again shortly');
      await deferWorkflowSignal(o.pool, sessionId, SIGNAL_RETRY_SECONDS).catch(() => undefined);
      return false;
    }
  };
  if (force || turn.status !== 'open') return send();
  await run.tells.add(async () => void (await send()));
  return true;
}
