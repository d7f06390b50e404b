import { Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { drainSessionWakes } from '../src/agents/drainer.js';
import { wakeSession } from '../src/agents/session-workflow.js';
import type { SignalExtractor } from '../src/providers/signal-extractor/types.js';
import type { DrainerSettings } from '../src/agents/drainer.js';
import type { SessionDrainerActivityResult, SessionDrainerInput } from '../workflows/session-drainer/contract.js';

export function createSessionDrainerActivities(deps: { pool: DatabasePool; extractor: SignalExtractor; analysisCreditCost: number; drainer: DrainerSettings; workerStopping?: AbortSignal }) {
  return {
    /** Processes due session wakes for a while (see drainSessionWakes), heartbeating. */
    async drainSessionWakes(_input: SessionDrainerInput): Promise<SessionDrainerActivityResult> {
      const ctx = Context.current();
      const o = deps.drainer;
      return drainSessionWakes({
        pool: deps.pool,
        extractor: deps.extractor,
        analysisCreditCost: deps.analysisCreditCost,
        concurrency: o.concurrency,
        pollMs: o.pollMs,
        signalEverySeconds: o.signalEverySeconds,
        tell: (target) => wakeSession(ctx.client, o.sessions, target),
        heartbeat: () => ctx.heartbeat(),
        signal: deps.workerStopping ? AbortSignal.any([ctx.cancellationSignal, deps.workerStopping]) : ctx.cancellationSignal,
        runForMs: o.runSeconds * 1000,
        logger: { warn: (meta, message) => { ctx.log.warn(message, meta); } },
      });
    },
  };
}

export type SessionDrainerActivities = ReturnType<typeof createSessionDrainerActivities>;
