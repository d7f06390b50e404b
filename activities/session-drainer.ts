import { Context } from '@temporalio/activity';
import { drainSessionWakes, type DrainerSettings } from '../src/agents/drainer.js';
import type { DrainerShardHost } from '../src/agents/drainer-shards.js';
import { wakeSession } from '../src/agents/session-workflow.js';
import { TemporalGateway } from '../src/temporal/gateway.js';
import type { AgentSessionActivityDeps } from './agent-sessions.js';
import type { SessionDrainerActivityResult, SessionDrainerInput } from '../workflows/session-drainer/contract.js';
import { throttledHeartbeat } from './heartbeat.js';

export function createSessionDrainerActivities(
  deps: AgentSessionActivityDeps & { drainer: DrainerSettings; drainerShards?: DrainerShardHost; workerStopping?: AbortSignal },
) {
  return {
    /**
     * Processes due session wakes of the input's shard for a while (see drainSessionWakes),
     * heartbeating; ends early when this worker holds more than its share of the shards. The drainer
     * of before issue 34 (no shard) drains every session, as it did, until it ends itself.
     */
    async drainSessionWakes(input: SessionDrainerInput): Promise<SessionDrainerActivityResult> {
      const ctx = Context.current();
      const temporal = new TemporalGateway(ctx.client);
      const sharded = input.shard !== undefined && input.shards !== undefined;
      const held = sharded ? deps.drainerShards?.enter() : undefined;
      try {
        return await drainSessionWakes({
          shard: sharded ? { index: input.shard!, count: input.shards! } : { index: 0, count: 1 },
          ...(held ? { keep: held.keep } : {}),
          ...(deps.drainerShards ? { lanes: deps.drainerShards.lanes, pacer: deps.drainerShards.pacer } : {}),
          ...(deps.drainerShards?.wakeups ? { wakeups: deps.drainerShards.wakeups } : {}),
          pool: deps.pool,
          extractor: deps.extractor,
          analysisCreditCost: deps.analysisCreditCost,
          ...deps.drainer,
          tell: (target) => wakeSession(temporal, deps.drainer.sessions, target),
          heartbeat: throttledHeartbeat(() => ctx.heartbeat()),
          signal: deps.workerStopping ? AbortSignal.any([ctx.cancellationSignal, deps.workerStopping]) : ctx.cancellationSignal,
          logger: {
            warn: (meta, message) => {
              ctx.log.warn(message, meta);
            },
          },
          observeAnalyses: (results) => deps.metrics?.analysisRound(results),
          observeDrained: (events) => deps.metrics?.eventsDrained(events),
        });
      } finally {
        held?.leave();
      }
    },
  };
}

export type SessionDrainerActivities = ReturnType<typeof createSessionDrainerActivities>;
