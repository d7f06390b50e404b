import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ProcessingStatus, SessionStatus } from '../../src/domain/agent-processing-plan.js';

/**
 * The agent session workflow: one per conversation, started or poked with signal-with-start by the
 * session drainer (see src/agents/drainer.ts) and the wakes reconciler. Versioned input and message types live here so that the API can import them.
 */
export const AGENT_SESSION_WORKFLOW = 'agentSessionWorkflow';

export function agentSessionWorkflowId(sessionId: string): string {
  return `agent-session/${sessionId}`;
}

// The processing rule's types live in src/domain, beside the rule that the processing activity shares.
export type {
  EventRef,
  Plan,
  ProcessingStatus,
  ProgressSnapshot,
  SessionStatus,
  StoredProgress,
} from '../../src/domain/agent-processing-plan.js';

/** What a run hands to the next one on continue-as-new (nothing is re-read that it already knew). */
export interface CarriedState {
  processedThroughSequence: number | null;
  highestSequence: number | null;
  status: SessionStatus;
  processingStatus: ProcessingStatus;
  ingests: number;
}

export interface AgentSessionInput {
  /** 1: before processing existed (replayed histories only); 2: processing. */
  /** Never read (see MediaIngestionInput.version); new starts leave it out. */
  version?: 1 | 2;
  organizationId: string;
  sessionId: string;
  /** An open session with no ingest for this long closes its workflow; the next ingest starts it again. */
  idleTimeoutSeconds: number;
  /** v2: while analysis is billing-blocked, the balance is checked again this often. */
  billingRecheckSeconds?: number;
  /** v2: start-to-close timeout of the database activities (a dead worker's task is retried after it). */
  activityTimeoutSeconds?: number;
  /** v2: continue-as-new once the history holds this many events (or when Temporal suggests it). */
  historyLimit?: number;
  /** Set by continue-as-new. */
  carried?: CarriedState;
}

/** Why a run closed (visible as the workflow's result in the Temporal UI). */
export type AgentSessionOutcome = 'idle' | 'finished' | 'session_deleted';

/** Sent by the drainer (and the reconciler): the session as stored. */
export interface EventsIngested {
  highestSequence: number | null;
  status: SessionStatus;
  processingStatus: ProcessingStatus;
}

export interface AgentSessionView {
  /** Every sequence up to this one has been processed (null: nothing yet). */
  processedThroughSequence: number | null;
  highestSequence: number | null;
  status: SessionStatus;
  processingStatus: ProcessingStatus;
  /** The first missing sequence processing waits for (open sessions only). */
  waitingForSequence: number | null;
  ingests: number;
}

// Naming rule for signals, updates and queries: the registered name is the exported constant's
// name without its kind (`eventsIngestedSignal` is registered as `eventsIngested`). Registered names
// are never renamed: stored histories and running workflows carry them.

/** Events were stored: process what is new (also the start's signal of signal-with-start). */
export const eventsIngestedSignal = defineSignal<[EventsIngested]>('eventsIngested');
/** Credits were added to the organization: billing-blocked analysis tries again at once. */
export const creditsAddedSignal = defineSignal('creditsAdded');
/** The session's processing, as the workflow sees it. */
export const sessionQuery = defineQuery<AgentSessionView>('session');

export interface ProcessResult {
  deleted: boolean;
  /**
   * The session as stored after the pass (absent in histories recorded before coalesced wakes):
   * ingests within a pass do not signal, so the workflow adopts their status and highest sequence here.
   */
  stored?: { status: SessionStatus; highestSequence: number | null };
  /** The watermark and gap after this page (the plan, without its event list). */
  processedThroughSequence: number | null;
  waitingFor: number | null;
  /** A full page was processed: more may be pending. */
  more: boolean;
  processed: number;
  signals: number;
  units: number;
  /** Analyses now queued for the session (0: nothing to analyse). */
  queued: number;
}

export interface AnalysisResult {
  deleted: boolean;
  analysed: number;
  failed: number;
  /** Queued analyses left (0 when caught up). */
  remaining: number;
  /** The organization's balance cannot pay the next analysis. */
  billingBlocked: boolean;
  /** The signal extractor is unreachable or overloaded: try again later. */
  providerUnavailable: boolean;
  /** The session's processing status after this round (as stored). */
  processingStatus: ProcessingStatus;
}
