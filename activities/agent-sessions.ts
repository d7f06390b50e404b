import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { analyseQueued, processEvents } from '../src/agents/processing.js';
import { loadProgress, pendingEvents } from '../src/db/repositories/agent-processing.js';
import type { SignalExtractor } from '../src/providers/signal-extractor/types.js';
import type { AnalysisResult, EventRef, PendingEvents, ProcessResult, StoredProgress } from '../workflows/agent-session/contract.js';

export interface AgentSessionActivityDeps {
  pool: DatabasePool;
  extractor: SignalExtractor;
  /** Credits one analysed response costs. */
  analysisCreditCost: number;
}

/** Analyses per activity call: small enough to finish well within the activity timeout. */
const ANALYSES_PER_CALL = 10;

export function createAgentSessionActivities(deps: AgentSessionActivityDeps) {
  return {
    async loadSessionProgress(sessionId: string): Promise<StoredProgress | null> {
      return loadProgress(deps.pool, sessionId);
    },
    async loadPendingEvents(sessionId: string, limit: number): Promise<PendingEvents> {
      return pendingEvents(deps.pool, sessionId, limit);
    },
    async processEvents(sessionId: string, batch: { events: EventRef[]; processedThroughSequence: number | null }): Promise<ProcessResult> {
      return processEvents(deps.pool, sessionId, batch);
    },
    async analyseQueued(sessionId: string): Promise<AnalysisResult> {
      const ctx = Context.current();
      return analyseQueued(deps.pool, sessionId, {
        extractor: deps.extractor,
        creditCost: deps.analysisCreditCost,
        limit: ANALYSES_PER_CALL,
        heartbeat: () => ctx.heartbeat(),
        signal: ctx.cancellationSignal,
      });
    },
  };
}

export type AgentSessionActivities = ReturnType<typeof createAgentSessionActivities>;
