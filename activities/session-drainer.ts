import { Context } from '@temporalio/activity';
import { drainSessionWakes, type DrainerSettings } from '../src/agents/drainer.js';
import { wakeSession } from '../src/agents/session-workflow.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import type { AgentSessionActivityDeps } from './agent-sessions.js';
import type { SessionDrainerActivityResult, SessionDrainerInput } from '../workflows/session-drainer/contract.js';

export function createSessionDrainerActivities(
  deps: AgentSessionActivityDeps & { drainer: DrainerSettings; workerStopping?: AbortSignal },
) {
  return {
    /** Processes due session wakes for a while (see drainSessionWakes), heartbeating. */
    async drainSessionWakes(_input: SessionDrainerInput): Promise<SessionDrainerActivityResult> {
      const ctx = Context.current();
      const temporal = new TemporalGateway(ctx.client);
      return drainSessionWakes({
        pool: deps.pool,
        extractor: deps.extractor,
        analysisCreditCost: deps.analysisCreditCost,
        ...deps.drainer,
        tell: (target) => wakeSession(temporal, deps.drainer.sessions, target),
        heartbeat: () => ctx.heartbeat(),
        signal: deps.workerStopping ? AbortSignal.any([ctx.cancellationSignal, deps.workerStopping]) : ctx.cancellationSignal,
        logger: {
          warn: (meta, message) => {
            ctx.log.warn(message, meta);
          },
        },
        observeAnalyses: (results) => deps.metrics?.analysisRound(results),
      });
    },
  };
}

export type SessionDrainerActivities = ReturnType<typeof createSessionDrainerActivities>;
