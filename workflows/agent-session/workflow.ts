import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentSessionActivities } from '../../activities/agent-sessions.js';
import { PROCESSED_THROUGH, PROCESSING_STATUS, STATUS } from '../search-attributes.js';
import {
  creditsAddedSignal,
  eventsIngestedSignal,
  sessionQuery,
  type AgentSessionInput,
  type AgentSessionOutcome,
  type AnalysisResult,
} from './contract.js';
import { Alarm } from './alarm.js';
import { legacySessionLoop } from './legacy.js';
import { SessionState } from './state.js';

const PAGE = 200;
const WATERMARK_EVERY_MS = 5000;
const DEFAULTS = { billingRecheckSeconds: 60, activityTimeoutSeconds: 30, historyLimit: 4000 };

/**
 * One conversation's long-lived workflow (`agent-session/<sessionId>`). The session drainer
 * processes most ingests without it and tells it (signal-with-start) when the session ends, when
 * analyses must wait, and at most every AGENT_WORKFLOW_SIGNAL_SECONDS otherwise; the reconciler
 * wakes it for a wake nothing took. On each signal it processes whatever is still pending, in
 * sequence order (waiting at gaps while the session is open),
 * runs the queued analyses while credits last, closes when idle or finished, and continues as new
 * before its history grows large. The database is the source of truth: a run starts from the
 * stored watermark, and every activity is an idempotent transaction, so a crash loses nothing.
 */
export async function agentSessionWorkflow(input: AgentSessionInput): Promise<AgentSessionOutcome | AgentSessionInput> {
  const state = new SessionState(input.carried);
  let creditsWake = false;
  let lastIngestAt = Date.now();
  // Registered before the first await so that the signal that started the run is not lost.
  setHandler(eventsIngestedSignal, (signal) => {
    state.apply(signal);
    lastIngestAt = Date.now();
  });
  setHandler(creditsAddedSignal, () => {
    creditsWake = true;
  });
  setHandler(sessionQuery, () => state.view);
  if (!patched('session-processing')) return legacySessionLoop(input, state);

  const o = { ...DEFAULTS, ...input };
  // Short database transactions run as local activities: in the worker, without a round trip
  // through the server per call (a retry after a crash re-runs them; they are idempotent).
  const db = proxyLocalActivities<AgentSessionActivities>({
    startToCloseTimeout: `${o.activityTimeoutSeconds} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  // Analyses call a provider (up to twenty per call): a longer budget, kept honest by heartbeats.
  const analysis = proxyActivities<AgentSessionActivities>({
    startToCloseTimeout: `${o.activityTimeoutSeconds * 10} seconds`,
    heartbeatTimeout: `${o.activityTimeoutSeconds * 2} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const shown = new Shown();
  const [idle, recheck, flush] = [new Alarm(), new Alarm(), new Alarm()];
  if (!input.carried) {
    const stored = await db.loadSessionProgress(input.sessionId);
    if (!stored) return 'session_deleted';
    state.load(stored);
  }
  let queued = 1; // unknown at the start of a run: look
  let lastLook = false;
  for (;;) {
    const processed = await processPending(db, input.sessionId, state);
    if (processed === 'deleted') return 'session_deleted';
    queued = Math.max(queued, processed);
    // A top-up that arrives while this analysis runs wakes the next wait.
    creditsWake = false;
    const analysed = queued > 0 ? await analysis.analyseQueued(input.sessionId) : idleAnalysis(state);
    queued = analysed.remaining;
    if (analysed.deleted) return 'session_deleted';
    state.processingStatus = analysed.processingStatus;
    shown.update(state);
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > o.historyLimit) {
      shown.update(state, true);
      // Handlers finish first, so that no signal is half-applied when the run closes.
      await condition(allHandlersFinished);
      return continueAsNew<typeof agentSessionWorkflow>({ ...input, carried: state.carry() });
    }
    const waiting = analysed.billingBlocked || analysed.providerUnavailable;
    if (queued > 0 && !waiting) continue;
    if (state.terminal && state.caughtUp && !state.dirty && queued === 0) {
      shown.update(state, true);
      return 'finished';
    }
    // Idle: no ingest for idleTimeoutSeconds. Analyses still waiting (credits, provider) get one
    // last look first; a top-up after the close restarts the run (creditsAdded signal-with-start).
    const idleLeft = lastIngestAt + input.idleTimeoutSeconds * 1000 - Date.now();
    if (idleLeft <= 0) {
      if (queued > 0 && !lastLook) {
        lastLook = true;
        continue;
      }
      shown.update(state, true);
      return 'idle';
    }
    lastLook = false;
    idle.arm(idleLeft);
    // While analyses wait for credits or for the provider, look again every billingRecheckSeconds.
    if (waiting) recheck.arm(o.billingRecheckSeconds * 1000);
    const due = shown.dueIn(state);
    if (due !== null) flush.arm(due);
    await condition(() => state.dirty || creditsWake || idle.ringing || recheck.ringing || flush.ringing);
    idle.take();
    flush.take();
    if (recheck.take() || creditsWake) queued = Math.max(queued, 1);
  }
}

/** No queued analysis: nothing to call (the stored status stands). */
function idleAnalysis(state: SessionState): AnalysisResult {
  return {
    deleted: false,
    analysed: 0,
    failed: 0,
    remaining: 0,
    billingBlocked: false,
    providerUnavailable: false,
    processingStatus: state.processingStatus,
  };
}

type Db = ReturnType<typeof proxyLocalActivities<AgentSessionActivities>>;

/**
 * Processes pending events page by page until nothing more may be processed now. The activity
 * applies the state's contiguous-watermark rule inside its transaction and reports the plan back.
 * Returns the analyses queued for the session, or 'deleted'.
 */
async function processPending(db: Db, sessionId: string, state: SessionState): Promise<'deleted' | number> {
  let queued = 0;
  while (state.dirty) {
    state.dirty = false;
    const result = await db.processPendingEvents(sessionId, state.snapshot(), PAGE);
    if (result.deleted) return 'deleted';
    if (result.stored) state.adopt(result.stored);
    state.advance(result);
    queued = result.queued;
    // A full page that was processed means more may follow; a gap means waiting for a signal.
    if (result.more) state.dirty = true;
  }
  return queued;
}

/**
 * Search attributes for the Temporal UI. Status changes are shown at once; the watermark, which
 * moves with every ingest, at most every WATERMARK_EVERY_MS and when the run closes: each upsert
 * is a visibility write on the server.
 */
class Shown {
  private status = '';
  private watermark: number | null = null;
  private at = 0;

  /** Milliseconds until a watermark not yet shown is due, or null when everything is shown. */
  dueIn(state: SessionState): number | null {
    if (state.processedThroughSequence === this.watermark) return null;
    return Math.max(0, this.at + WATERMARK_EVERY_MS - Date.now());
  }

  update(state: SessionState, final = false): void {
    const status = `${state.status}|${state.processingStatus}`;
    const moved = state.processedThroughSequence !== this.watermark;
    if (status === this.status && (!moved || (!final && Date.now() - this.at < WATERMARK_EVERY_MS))) return;
    this.status = status;
    this.watermark = state.processedThroughSequence;
    this.at = Date.now();
    upsertSearchAttributes([
      { key: STATUS, value: state.status },
      { key: PROCESSING_STATUS, value: state.processingStatus },
      ...(state.processedThroughSequence === null ? [] : [{ key: PROCESSED_THROUGH, value: state.processedThroughSequence }]),
    ]);
  }
}
