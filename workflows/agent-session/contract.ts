import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * The agent session workflow: one per conversation, started or poked by every ingest with
 * signal-with-start. Versioned input and message types live here so that the API can import them.
 */
export const AGENT_SESSION_WORKFLOW = 'agentSessionWorkflow';

export function agentSessionWorkflowId(sessionId: string): string {
  return `agent-session/${sessionId}`;
}

export type SessionStatus = 'open' | 'ended' | 'abandoned';

export interface AgentSessionInput {
  version: 1;
  organizationId: string;
  sessionId: string;
  /** An open session with no ingest for this long closes its workflow; the next ingest starts it again. */
  idleTimeoutSeconds: number;
}

/** Sent after each committed ingest. */
export interface EventsIngested {
  highestSequence: number | null;
  status: SessionStatus;
  processingStatus: 'pending' | 'billing_blocked' | 'capture_disabled';
}

export interface AgentSessionView {
  highestSequence: number | null;
  status: SessionStatus;
  processingStatus: EventsIngested['processingStatus'];
  ingests: number;
}

export const eventsIngested = defineSignal<[EventsIngested]>('eventsIngested');
export const sessionView = defineQuery<AgentSessionView>('session');
