import type { DomainEvent } from './events.js';

/**
 * The agent session's state machine and its wake/hold protocol, in one place (issue 30, point 7;
 * docs/agent-session-protocol.md draws it). Pure: the repositories store what this decides.
 *
 * Glossary
 * - session status (`status`): `open` until the agent ends it (`ended`) or gives it up
 *   (`abandoned`); set by the ingest only, never reopened.
 * - processing status (`processing_status`): whether the session's analyses can run now: `pending`
 *   (yes, or nothing to run), `billing_blocked` (the organization's balance cannot pay an analysis),
 *   `capture_disabled` (content capture is off: nothing to analyse). `processing` and `completed`
 *   are allowed by the column's CHECK (migration 0003) and never written; they are treated as
 *   `pending`. Reads report more than is stored (decision 0209): `pending`, `processing` (analyses
 *   queued) or `completed` (nothing left), derived from the session's progress by
 *   `reportedProcessingStatus` (src/db/repositories/agent-conversations.ts).
 * - watermark (`processed_through_sequence`): every event up to it is processed (the contiguous
 *   rule of workflows/agent-session/state.ts).
 * - pass: one page of a session's pending events processed under its pass lock (explicit signals,
 *   metering, queued analyses, the watermark): the workflow's `processPendingEvents` activity or the
 *   drainer, by the same code (src/agents/processing.ts).
 * - analysis round: a batch of queued analyses run against the provider and paid in credits.
 * - wake: the request that the session be processed (`wake_requested_at`). An ingest that gives
 *   the session work requests one (once, however many ingests ask); a pass that leaves nothing it
 *   may process now takes it.
 * - drainer: the worker's long-running activity (workflows/session-drainer) that claims due
 *   wakes, runs passes and analysis rounds without a workflow task, and tells the workflow.
 * - reconciler: the schedule (workflows/session-wakes) that wakes sessions whose wake was requested
 *   long ago and never taken.
 * - told: the session's workflow received the drainer's signal. Routine signals go at most once
 *   per AGENT_WORKFLOW_SIGNAL_SECONDS (`workflow_signalled_at`); at once when the session ended.
 * - hold: a session's analyses wait (for credits or for the provider). A hold is told to the
 *   workflow once (`hold_signalled_at`), and counts as told only while `workflow_signalled_at` is
 *   set too (the signal was sent); while it is told, the drainer leaves the queued analyses to the
 *   workflow, which runs them when it can.
 */

export type SessionStatus = 'open' | 'ended' | 'abandoned';

/** What the column may hold (migration 0003). */
export type StoredProcessingStatus = 'pending' | 'processing' | 'completed' | 'billing_blocked' | 'capture_disabled';

/** What Intake writes and reports. */
export type ProcessingStatus = 'pending' | 'billing_blocked' | 'capture_disabled';

/** The stored value as Intake reads it: the never-written legacy values are `pending`. */
export function effectiveProcessingStatus(stored: string): ProcessingStatus {
  return stored === 'billing_blocked' || stored === 'capture_disabled' ? stored : 'pending';
}

/**
 * The statuses an analysis round moves between `pending` and `billing_blocked`; `capture_disabled`
 * belongs to the ingest, which sets and clears it with the application's content capture.
 */
export const BILLING_MANAGED: readonly StoredProcessingStatus[] = ['pending', 'processing', 'completed', 'billing_blocked'];

/**
 * The processing status an ingest leaves: capture off is `capture_disabled`; otherwise
 * `billing_blocked` while the balance (read under the session's lock) cannot pay one analysis.
 */
export function processingStatusAfterIngest(o: {
  captureContent: boolean;
  creditBalance: number;
  analysisCreditCost: number;
}): ProcessingStatus {
  if (!o.captureContent) return 'capture_disabled';
  return o.creditBalance >= o.analysisCreditCost ? 'pending' : 'billing_blocked';
}

/** The processing status an analysis round aims at (applied only from BILLING_MANAGED statuses). */
export function processingStatusAfterAnalysis(blocked: boolean): 'pending' | 'billing_blocked' {
  return blocked ? 'billing_blocked' : 'pending';
}

/** The transition an integrator hears about, if any: into `billing_blocked`, or from it to `pending`. */
export function billingTransition(before: string, after: string): 'agent_session.billing_blocked' | 'agent_session.billing_resumed' | null {
  const from = effectiveProcessingStatus(before);
  const to = effectiveProcessingStatus(after);
  if (from !== 'billing_blocked' && to === 'billing_blocked') return 'agent_session.billing_blocked';
  if (from === 'billing_blocked' && to === 'pending') return 'agent_session.billing_resumed';
  return null;
}

/** A session whose processing status changed (or may have): the rows a write returned. */
export interface StatusChange {
  sessionId: string;
  organizationId: string;
  applicationId: string;
  before: string;
  after: string;
}

/** The billing events of these changes (recorded in the transaction that made them). */
export function billingEvents(changes: readonly StatusChange[]): DomainEvent[] {
  return changes.flatMap((c): DomainEvent[] => {
    const type = billingTransition(c.before, c.after);
    return type
      ? [
          {
            type,
            organizationId: c.organizationId,
            subjectId: c.sessionId,
            payload: { sessionId: c.sessionId, applicationId: c.applicationId },
          },
        ]
      : [];
  });
}

/**
 * The wake/hold protocol's columns on `agent_sessions`: who sets each and who clears it. The
 * repository functions named here (src/db/repositories/agent-sessions.ts) are the only writers.
 */
export const PROTOCOL_COLUMNS = {
  /** Migration 0011. */
  wake_requested_at: {
    means: 'the session has work a pass has not taken yet (due at this time)',
    setBy: 'the ingest that gives the session work, when none is pending (updateSessionsAfterIngest)',
    clearedBy:
      "a pass that leaves nothing it may process now, unless an ingest requested it again since the pass read the session (advanceSessions, wake_seq); the drainer's analysis round after such a pass that leaves nothing queued, on the same condition (settleAnalysisRound)",
    movedBy: 'the drainer, after a failed drain or signal: due again later (deferWakes, deferWorkflowSignal)',
    readBy: 'the drainer (claimDueSessions) and the reconciler (strandedWakes)',
  },
  /** Migration 0034. */
  wake_seq: {
    means: "the wake's generation: a pass takes the wake only if no ingest requested one since it read the session",
    setBy: 'every ingest that requests a wake, raising it by one (updateSessionsAfterIngest)',
    clearedBy: 'never',
    readBy: 'passes, with the session (takeSessionsForPass, claimDueSessions)',
  },
  /** Migration 0015. */
  wake_trace_parent: {
    means: 'the trace of the ingest that requested the pending wake (tracing on)',
    setBy: 'the ingest that requests a wake (updateSessionsAfterIngest)',
    clearedBy: 'never: the next requested wake replaces it',
    readBy: 'whoever tells the workflow (wakeTargetOf)',
  },
  /** Migration 0012. */
  workflow_signalled_at: {
    means: "the drainer last sent the workflow a signal then (NULL: never, a hold's signal is in flight, or the last one failed)",
    setBy:
      'a drainer pass or analysis round taking a routine turn with the wake (advanceSessions, settleAnalysisRound) or confirming a sent hold (confirmHoldSignals)',
    clearedBy: 'the drainer taking a hold turn (takeHoldSignalTurns) and a failed signal (deferWorkflowSignal)',
    readBy: 'the drainer (its turns) and every pass (hold told: see HOLD_TOLD)',
  },
  /** Migration 0019. */
  hold_signalled_at: {
    means: 'the drainer told the workflow that its analyses wait (counts only with workflow_signalled_at set)',
    setBy: 'the drainer taking a hold turn (takeHoldSignalTurns)',
    clearedBy:
      'an analysis round that was not held, by the workflow or the drainer (settleAnalysisRound), and a failed signal (deferWorkflowSignal)',
    readBy: "the drainer's passes: while told, they leave queued analyses to the workflow",
  },
} as const;

/**
 * Whether a pass takes the session's wake (it is `settled`): nothing more it may process now
 * (no further page), and, for the drainer's passes, no analysis queued that the drainer would run
 * next outside any durable record but the wake, unless the workflow was told of a hold and runs them.
 */
export function passSettles(o: { more: boolean; holdWakeWhileQueued: boolean; queued: number; holdTold: boolean }): boolean {
  return !o.more && !(o.holdWakeWhileQueued && o.queued > 0 && !o.holdTold);
}
