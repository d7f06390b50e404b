import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabasePool } from 'slonik';
import {
  anySessionDue,
  confirmHoldSignals,
  deferRoutineSignals,
  deferWakes,
  deferWorkflowSignal,
  takeHoldSignalTurns,
  type SignalTarget,
} from '../db/repositories/agent-sessions.js';
import type { DrainShard } from '../db/repositories/agent-sessions.js';
import type { SignalExtractor } from '../providers/signal-extractor/types.js';
import {
  ANALYSIS_BATCH,
  analyseDrainedSessions,
  processDueSessions,
  processSessions,
  type AnalysisOptions,
  type DrainedSession,
} from './processing.js';
import type { Config } from '../config.js';
import { TellPacer } from './tell-pacer.js';
import { HOT_MS, type DrainWakeups } from './drain-wakeups.js';
import type { SessionDrainerActivityResult } from '../../workflows/session-drainer/contract.js';
import { sessionWorkflowSettings, wakeTargetOf, type SessionWorkflowSettings, type WakeTarget } from './session-workflow.js';

/** The worker's drainer settings (configuration). */
export interface DrainerSettings {
  /** Batches of sessions in flight at once (each claims, processes and analyses its sessions). */
  concurrency: number;
  /** Sessions one batch claims (one statement per table processes all of them). */
  batchSessions: number;
  /** While the drainer is busy (a wake came in the last second), how long to wait before looking again when nothing is due. */
  pollMs: number;
  /** While nothing wakes it, how long the drainer waits before looking by itself (the safety net; see DrainWakeups). */
  idlePollMs: number;
  /** A session's workflow is told at most this often while nothing needs it (0: after every pass). */
  signalEverySeconds: number;
  /** Routine signals this worker sends a second at most (0: no limit); the others are deferred (TellPacer). */
  routineSignalsPerSecond: number;
  /** How long one activity call runs before it returns (the workflow calls again), so that its history stays small. */
  runSeconds: number;
  /** How the session workflows it tells are started. */
  sessions: SessionWorkflowSettings;
}

export function drainerSettings(config: Pick<Config, 'agents' | 'temporal'>): DrainerSettings {
  return {
    concurrency: config.agents.drainConcurrency,
    batchSessions: config.agents.drainBatchSessions,
    pollMs: config.agents.drainPollMs,
    idlePollMs: config.agents.drainIdlePollMs,
    signalEverySeconds: config.agents.workflowSignalSeconds,
    routineSignalsPerSecond: config.agents.workflowSignalsPerSecond,
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
  /** Told each analysis round's results (the worker's metrics). */
  observeAnalyses?: AnalysisOptions['observe'];
  /** Told the events each batch processed (the worker's metrics). */
  observeDrained?: (events: number) => void;
  /** The sessions this run drains: its shard of the task queue's (all of them: `{ index: 0, count: 1 }`). */
  shard: DrainShard;
  /** Whether the run may go on: false once it is beyond its worker's share of the shards (it ends, `yielded`). */
  keep?: () => boolean;
  /** The process's lanes, shared by the shard runs it holds: every batch takes one. */
  lanes?: <T>(work: () => Promise<T>) => Promise<T>;
  /** The process's pace of routine signals, shared by the shard runs it holds (else one of the run's own). */
  pacer?: TellPacer;
  /**
   * What wakes the process's idle drainer (the ingests' notifications): with it, an idle run looks
   * only every `idlePollMs` by itself; without it (tests), every `pollMs`.
   */
  wakeups?: DrainWakeups;
}

/** What one drain call did (the activity's result in the drainer's history). */
export type DrainResult = SessionDrainerActivityResult;

const PAGE = 500;
/** A workflow signal or a session drain that failed is tried again after this long, even with no new ingest. */
const SIGNAL_RETRY_SECONDS = 5;
/** An idle run heartbeats this often while it waits for a wake (the drainer activity's heartbeat timeout is 10 s). */
const IDLE_HEARTBEAT_MS = 3000;
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
  pacer: TellPacer;
}

/**
 * The session drainer: the worker's consumer of requested wakes (`agent_sessions.wake_requested_at`,
 * set by ingests in their own transaction), with no Temporal call per ingest. Each of its
 * `concurrency` lanes claims a batch of due sessions and processes a page of each in one
 * transaction (the session workflow's own rules and statements, one statement per table for the
 * batch), then runs the batch's queued analyses together. A session is settled (its wake taken) by
 * a pass that finds nothing to process and no analysis queued, or only analyses its workflow was
 * told must wait (the workflow runs them); until then it stays due and is claimed again. The
 * session's workflow keeps what only it does (status in the Temporal UI, idle close,
 * continue-as-new, waiting for credits or the provider): the drainer tells it at once when it has
 * work (the session ended, analyses start to wait) and otherwise at most every
 * `signalEverySeconds`. A crash anywhere loses nothing: the wake stays requested until a settling
 * pass, and every write is idempotent.
 */
export async function drainSessionWakes(o: DrainOptions): Promise<DrainResult> {
  const totals: DrainResult = { sessions: 0, events: 0, analyses: 0, signals: 0 };
  const run: Run = { o, totals, tells: new Bounded(TELLS_IN_FLIGHT), pacer: o.pacer ?? new TellPacer(o.routineSignalsPerSecond) };
  const deadline = Date.now() + o.runSeconds * 1000;
  const keep = o.keep ?? (() => true);
  let yielded = false;
  const done = () => {
    if (!yielded && !keep()) yielded = true;
    return yielded || o.signal.aborted || Date.now() >= deadline;
  };
  // Sessions a lane works on between its transactions; claims are one at a time, so that a claim
  // never misses a session another lane took in a claim that has just committed.
  const busy = new Set<string>();
  let claiming = Promise.resolve<unknown>(undefined);
  const claim = () => {
    const next = claiming.then(async () => {
      const batch = await processDueSessions(o.pool, o.shard, [...busy], o.batchSessions, PAGE, o.signalEverySeconds);
      for (const s of batch) busy.add(s.sessionId);
      return batch;
    });
    claiming = next.catch(() => undefined);
    return next;
  };
  // While nothing is due, the first lane alone looks: every pollMs while the drainer is busy (a wake
  // or work in the last HOT_MS), else when woken (an ingest's notification, a deferral due) or every
  // idlePollMs. The others wait until a lane claims work (more may be due), so that an idle shard
  // costs one look per idlePollMs.
  let lastWork = 0;
  const hot = () => !o.wakeups || o.wakeups.hot() || Date.now() - lastWork < HOT_MS;
  let work = Promise.withResolvers<void>();
  const wakeLanes = () => {
    work.resolve();
    work = Promise.withResolvers<void>();
  };
  const lane = async (n: number) => {
    // A run starts with its first lane's look; the others join when it finds work (or while busy).
    if (n > 0 && !hot() && !done()) {
      const left = Math.max(0, deadline - Date.now());
      await Promise.race([sleep(left, undefined, { signal: o.signal }).catch(() => undefined), work.promise]);
    }
    while (!done()) {
      let batch: DrainedSession[] = [];
      const pass = async () => {
        try {
          batch = await claim();
          o.heartbeat();
          if (batch.length) await follow(run, batch);
        } catch (error) {
          const ids = batch.map((s) => s.sessionId);
          o.logger?.warn({ err: error, sessions: ids.length }, 'session drain failed; the wakes stay requested, looked at again shortly');
          await deferWakes(o.pool, ids, SIGNAL_RETRY_SECONDS).catch(() => undefined);
          o.wakeups?.pokeIn(SIGNAL_RETRY_SECONDS * 1000);
        } finally {
          for (const s of batch) busy.delete(s.sessionId);
        }
      };
      await (o.lanes ? o.lanes(pass) : pass());
      if (batch.length > 0) {
        lastWork = Date.now();
        wakeLanes();
      }
      // A full batch: more may be due at once. Else the first lane looks again after pollMs while
      // busy, or when woken (at the latest after idlePollMs); the others when a lane finds work (at
      // the latest after 20 pollMs while busy).
      if (batch.length >= o.batchSessions || done()) continue;
      const left = deadline - Date.now();
      // A claim that took nothing while sessions are still due (held by another pass, or left while
      // their ingest was in flight) looks again after pollMs: no notification may come for them.
      if (n === 0 && !hot() && !(batch.length === 0 && (await anySessionDue(o.pool, o.shard, [...busy]).catch(() => false)))) {
        // Waiting for a wake, the run still heartbeats (its activity's heartbeat timeout is shorter than idlePollMs).
        const until = Date.now() + Math.max(0, Math.min(o.idlePollMs, left));
        while (!done() && Date.now() < until && !hot()) {
          await o.wakeups!.wait(Math.min(IDLE_HEARTBEAT_MS, until - Date.now()), o.signal);
          o.heartbeat();
        }
        continue;
      }
      const idle = Math.max(0, Math.min(n === 0 ? o.pollMs : hot() ? o.pollMs * 20 : left, left));
      const pause = sleep(idle, undefined, { signal: o.signal }).catch(() => undefined);
      await (n === 0 ? pause : Promise.race([pause, work.promise]));
    }
    // The run is over (its deadline, a stop, or it yielded): the lanes still waiting for work end
    // now, not at the deadline. A yielding run hands its shard over at once; its waiting lanes do
    // not heartbeat, so until it ends its call would look dead, and be retried after the timeout.
    wakeLanes();
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, n) => lane(n)));
  await run.tells.settled();
  return yielded ? { ...totals, yielded } : totals;
}

/**
 * After a batch's pass: its queued analyses, then the workflows to tell. Sessions with more pages
 * or analyses done keep their wake and are claimed again (their request is the oldest). Analyses
 * that must wait (credits, provider) go to the session's workflow, which waits durably: the wake is
 * taken, by a pass that does not hold it for them, only once the workflow knows of the hold.
 */
async function follow(run: Run, batch: readonly DrainedSession[]): Promise<void> {
  const { o, totals } = run;
  const live = batch.filter((s) => !s.deleted);
  counted(run, live);
  const settled = live.filter((s) => s.settled);
  totals.sessions += settled.length;
  const toAnalyse = live.filter((s) => !s.settled && !s.more && s.queued > 0);
  const turns = settled.flatMap((s) => (s.turn ? [s.turn] : []));
  if (toAnalyse.length && !o.signal.aborted) {
    // The round takes the wakes it leaves with nothing to do (RoundSettling): no pass follows only for them.
    const round = await analyseDrainedSessions(
      o.pool,
      toAnalyse.map((s) => s.sessionId),
      {
        extractor: o.extractor,
        creditCost: o.analysisCreditCost,
        ...ANALYSIS_BATCH,
        heartbeat: o.heartbeat,
        signal: o.signal,
        observe: o.observeAnalyses,
      },
      { wakeSeqs: new Map(toAnalyse.map((s) => [s.sessionId, s.wakeSeq])), routineTurnEverySeconds: o.signalEverySeconds },
    );
    totals.sessions += round.settled.size;
    turns.push(...round.turns);
    const held: string[] = [];
    for (const [id, a] of round.results) {
      totals.analyses += a.analysed;
      if (!a.deleted && (a.billingBlocked || a.providerUnavailable)) held.push(id);
    }
    const known = await tellHeld(run, held);
    if (known.length) {
      const released = await processSessions(o.pool, known, PAGE, {});
      counted(run, released);
      totals.sessions += released.filter((s) => s.settled).length;
    }
  }
  await tellRoutine(run, turns);
}

/**
 * Tells the workflows of sessions whose analyses must wait, before their wakes may be taken: a
 * hold is told once, and the told workflow runs the analyses when it can, while the drainer's
 * passes settle the session without a round (its routine signals keep the workflow from closing
 * idle). Telling it on every ingest, as an organization out of credits under load would have it,
 * costs a workflow task and an analysis activity each and starves every other workflow of task
 * slots. A hold counts as told once its signal was sent: a process that dies in between leaves it
 * to the next pass. Returns the sessions whose workflow knows of the hold (told now, or before):
 * those whose signal failed are looked at again shortly.
 */
async function tellHeld(run: Run, sessionIds: readonly string[]): Promise<string[]> {
  const turns = await takeHoldSignalTurns(run.o.pool, sessionIds);
  const sent = await Promise.all(turns.map((turn) => send(run, turn)));
  await confirmHoldSignals(
    run.o.pool,
    turns.filter((_, i) => sent[i]).map((t) => t.id),
  );
  const failed = new Set(turns.filter((_, i) => !sent[i]).map((t) => t.id));
  return sessionIds.filter((id) => !failed.has(id));
}

/**
 * Tells the workflows of settled sessions whose routine turn the pass took (a session that ended
 * always has it; see advanceSessions): ended sessions at once; open ones in the background, the
 * lane moving on, at the worker's pace: those beyond it are deferred to their slot (their turn due
 * again, their wake set for then). A process that dies before sending a routine signal leaves it
 * to the session's next turn.
 */
async function tellRoutine(run: Run, turns: readonly SignalTarget[]): Promise<void> {
  await Promise.all(turns.filter((t) => t.status !== 'open').map((turn) => send(run, turn)));
  const deferred: { sessionId: string; seconds: number }[] = [];
  for (const turn of turns.filter((t) => t.status === 'open')) {
    const wait = run.pacer.slot(turn.id);
    if (wait > 0) deferred.push({ sessionId: turn.id, seconds: wait / 1000 });
    else await run.tells.add(async () => void (await send(run, turn)));
  }
  await deferRoutineSignals(run.o.pool, deferred);
  // Each deferred wake falls due at its slot (to the tenth of a second: one timer per slot).
  for (const seconds of new Set(deferred.map((d) => Math.ceil(d.seconds * 10) / 10))) run.o.wakeups?.pokeIn(seconds * 1000);
}

/** Adds the sessions' processed events to the run's totals and the worker's metrics. */
function counted(run: Run, sessions: readonly DrainedSession[]): void {
  const events = sessions.reduce((sum, s) => sum + s.processed, 0);
  run.totals.events += events;
  run.o.observeDrained?.(events);
}

/** One signal-with-start; a failed one has the session looked at again shortly (deferWorkflowSignal). */
async function send(run: Run, turn: SignalTarget): Promise<boolean> {
  const { o, totals } = run;
  try {
    await o.tell(wakeTargetOf(turn));
    totals.signals++;
    return true;
  } catch (error) {
    o.logger?.warn({ err: error, sessionId: turn.id }, 'could not tell the session workflow; trying again shortly');
    await deferWorkflowSignal(o.pool, turn.id, SIGNAL_RETRY_SECONDS).catch(() => undefined);
    o.wakeups?.pokeIn(SIGNAL_RETRY_SECONDS * 1000);
    return false;
  }
}
