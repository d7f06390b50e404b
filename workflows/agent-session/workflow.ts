import {
  allHandlersFinished, condition, continueAsNew, patched, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import type { AgentSessionActivities } from '../../activities/agent-sessions.js';
import { PROCESSED_THROUGH, PROCESSING_STATUS, STATUS } from '../search-attributes.js';
import {
  creditsAdded, eventsIngested, sessionView, type AgentSessionInput, type AgentSessionOutcome,
} from './contract.js';
import { legacySessionLoop } from './legacy.js';
import { SessionState } from './state.js';

const PAGE = 200;
const DEFAULTS = { billingRecheckSeconds: 60, activityTimeoutSeconds: 30, historyLimit: 4000 };

/**
 * One conversation's long-lived workflow (`agent-session/<sessionId>`). Every ingest signals it;
 * it processes the stored events in sequence order (waiting at gaps while the session is open),
 * runs the queued analyses while credits last, closes when idle or finished, and continues as new
 * before its history grows large. The database is the source of truth: a run starts from the
 * stored watermark, and every activity is an idempotent transaction, so a crash loses nothing.
 */
export async function agentSessionWorkflow(input: AgentSessionInput): Promise<AgentSessionOutcome | AgentSessionInput> {
  const state = new SessionState(input.carried);
  let creditsWake = false;
  let lastIngestAt = Date.now();
  // Registered before the first await so that the signal that started the run is not lost.
  setHandler(eventsIngested, (signal) => {
    state.apply(signal);
    lastIngestAt = Date.now();
  });
  setHandler(creditsAdded, () => {
    creditsWake = true;
  });
  setHandler(sessionView, () => state.view);
  if (!patched('session-processing')) return legacySessionLoop(input, state);

  const o = { ...DEFAULTS, ...input };
  const db = proxyActivities<AgentSessionActivities>({
    startToCloseTimeout: `${o.activityTimeoutSeconds} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  // Analyses call a provider (up to ten per call): a longer budget, kept honest by heartbeats.
  const analysis = proxyActivities<AgentSessionActivities>({
    startToCloseTimeout: `${o.activityTimeoutSeconds * 10} seconds`,
    heartbeatTimeout: `${o.activityTimeoutSeconds * 2} seconds`,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const shown = new Shown();
  if (!input.carried) {
    const stored = await db.loadSessionProgress(input.sessionId);
    if (!stored) return 'session_deleted';
    state.load(stored);
  }
  for (;;) {
    if ((await processPending(db, input.sessionId, state)) === 'deleted') return 'session_deleted';
    const analysed = await analysis.analyseQueued(input.sessionId);
    if (analysed.deleted) return 'session_deleted';
    state.processingStatus = analysed.processingStatus;
    shown.update(state);
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > o.historyLimit) {
      // Handlers finish first, so that no signal is half-applied when the run closes.
      await condition(allHandlersFinished);
      return continueAsNew<typeof agentSessionWorkflow>({ ...input, carried: state.carry() });
    }
    if (analysed.remaining > 0 && !analysed.billingBlocked) continue;
    if (state.terminal && state.caughtUp && !state.dirty && analysed.remaining === 0) return 'finished';
    // Idle: no ingest for idleTimeoutSeconds. While billing-blocked, the balance is re-checked
    // meanwhile (and at once on creditsAdded); a top-up after the close restarts the run.
    const idleLeft = lastIngestAt + input.idleTimeoutSeconds * 1000 - Date.now();
    if (idleLeft <= 0) return 'idle';
    const timeout = analysed.billingBlocked ? Math.min(o.billingRecheckSeconds * 1000, idleLeft) : idleLeft;
    creditsWake = false;
    await condition(() => state.dirty || creditsWake, timeout);
  }
}

type Db = ReturnType<typeof proxyActivities<AgentSessionActivities>>;

/** Reads and processes pending events page by page until nothing more may be processed now. */
async function processPending(db: Db, sessionId: string, state: SessionState): Promise<'deleted' | 'done'> {
  while (state.dirty) {
    state.dirty = false;
    const pending = await db.loadPendingEvents(sessionId, PAGE);
    const plan = state.plan(pending.events);
    if (plan.process.length > 0) {
      const result = await db.processEvents(sessionId, { events: plan.process, processedThroughSequence: plan.processedThroughSequence });
      if (result.deleted) return 'deleted';
    }
    state.advance(plan);
    // A full page that was processed means more may follow; a gap means waiting for a signal.
    if (!pending.complete && plan.process.length > 0) state.dirty = true;
  }
  return 'done';
}

/** Search attributes for the Temporal UI, upserted only when they change. */
class Shown {
  private last = '';

  update(state: SessionState): void {
    const key = `${state.status}|${state.processingStatus}|${state.processedThroughSequence}`;
    if (key === this.last) return;
    this.last = key;
    upsertSearchAttributes([
      { key: STATUS, value: state.status },
      { key: PROCESSING_STATUS, value: state.processingStatus },
      ...(state.processedThroughSequence === null ? [] : [{ key: PROCESSED_THROUGH, value: state.processedThroughSequence }]),
    ]);
  }
}
