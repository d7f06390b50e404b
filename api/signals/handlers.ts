import { listSignals, signalChanges, usageByDay } from '../../src/db/repositories/agent-signals.js';
import { findSession } from '../../src/db/repositories/agent-conversations.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { createdRange } from '../created-range.js';
import { principalOf } from '../middleware/auth.js';
import { pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import { changeBody, changeWindow, offsetBody, syncRequest } from '../sync.js';
import { presentSignal, type SignalsQuery, type Usage, type UsageQuery } from './schemas.js';

function startOfUtcMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

/** Who reads: the organization, and the user whose conversation access applies (null for API keys). */
function readerOf(ctx: AppContext) {
  const p = principalOf(ctx);
  return { organizationId: p.organizationId, userId: p.kind === 'user' ? p.userId : null };
}

export function signalHandlers(deps: AppDeps) {
  return {
    listSignals: async (ctx: AppContext, { query }: RouteInput<unknown, SignalsQuery>) => {
      const reader = readerOf(ctx);
      const filter = { ...query, ...createdRange(query) };
      const sync = syncRequest(ctx, 'signals', query);
      if (sync) {
        const page = await signalChanges(deps.pool, reader, filter, changeWindow(sync, query.limit));
        ctx.body = changeBody('signals', 'signals', sync, query.limit, page, presentSignal);
        return;
      }
      const rows = await listSignals(deps.pool, reader, { ...filter, ...pageWindow(query) });
      ctx.body = offsetBody('signals', rows, query, presentSignal);
    },

    usage: async (ctx: AppContext, { query }: RouteInput<unknown, UsageQuery>) => {
      const now = new Date();
      const from = new Date(query.from ?? startOfUtcMonth(now)).toISOString();
      const to = new Date(query.to ?? now.toISOString()).toISOString();
      if (from >= to) throw new ValidationError([{ path: 'query.to', message: 'must be after from' }], 'The time range is empty.');
      // A session's units only for whom may read the session (conversation access).
      if (query.sessionId && !(await findSession(deps.pool, readerOf(ctx), query.sessionId))) throw new NotFoundError('Agent session');
      const days = await usageByDay(deps.pool, {
        organizationId: principalOf(ctx).organizationId,
        unit: query.unit,
        from,
        to,
        applicationId: query.applicationId,
        sessionId: query.sessionId,
      });
      const usage: Usage = {
        unit: query.unit,
        from,
        to,
        applicationId: query.applicationId ?? null,
        sessionId: query.sessionId ?? null,
        quantity: days.reduce((sum, d) => sum + d.quantity, 0),
        days: [...days],
      };
      ctx.body = usage;
    },
  };
}
