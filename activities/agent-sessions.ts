import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { ANALYSIS_BATCH, analyseQueued, processPending } from '../src/agents/processing.js';
import { loadProgress } from '../src/db/repositories/agent-processing.js';
import type { ActivityMetrics } from '../src/metrics/activity-metrics.js';
import type { SignalExtractor } from '../src/providers/signal-extractor/types.js';
import type { AnalysisResult, ProcessResult, ProgressSnapshot, StoredProgress } from '../workflows/agent-session/contract.js';
import { throttledHeartbeat } from './heartbeat.js';

export interface AgentSessionActivityDeps {
  pool: DatabasePool;
  extractor: SignalExtractor;
  /** Credits one analysed response costs. */
  analysisCreditCost: number;
  /** The worker's activity metrics (none in tests that do not read them). */
  metrics?: ActivityMetrics;
}

const HEARTBEAT_MS = 5_000;

export function createAgentSessionActivities(deps: AgentSessionActivityDeps) {
  return {
    async loadSessionProgress(sessionId: string): Promise<StoredProgress | null> {
      return loadProgress(deps.pool, sessionId);
    },
    /** Processes the next page of pending events that the workflow's state allows (see processPending). */
    async processPendingEvents(sessionId: string, at: ProgressSnapshot, pageSize: number): Promise<ProcessResult> {
      return processPending(deps.pool, sessionId, at, pageSize);
    },
    async analyseQueued(sessionId: string): Promise<AnalysisResult> {
      const ctx = Context.current();
      // Heartbeats also while a slow provider call is in flight, whatever its own timeout.
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        return await analyseQueued(deps.pool, sessionId, {
          extractor: deps.extractor,
          creditCost: deps.analysisCreditCost,
          ...ANALYSIS_BATCH,
          heartbeat: throttledHeartbeat(() => ctx.heartbeat()),
          signal: ctx.cancellationSignal,
          observe: (results) => deps.metrics?.analysisRound(results),
        });
      } finally {
        clearInterval(beat);
      }
    },
  };
}

export type AgentSessionActivities = ReturnType<typeof createAgentSessionActivities>;
