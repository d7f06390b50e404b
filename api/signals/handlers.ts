import { listSignals, signalChanges, usageByDay } from '../../src/db/repositories/agent-signals.js';
import { ValidationError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import { changeBody, changeWindow, offsetBody, syncRequest } from '../sync.js';
import { presentSignal, type SignalsQuery, type Usage, type UsageQuery } from './schemas.js';

function startOfUtcMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

export function signalHandlers(deps: AppDeps) {
  return {
    listSignals: async (ctx: AppContext, { query }: RouteInput<unknown, SignalsQuery>) => {
      const p = principalOf(ctx);
      const reader = { organizationId: p.organizationId, userId: p.kind === 'user' ? p.userId : null };
      const sync = syncRequest(ctx, 'signals', query);
      if (sync) {
        const page = await signalChanges(deps.pool, reader, query, changeWindow(sync, query.limit));
        ctx.body = changeBody('signals', 'signals', sync, query.limit, page, presentSignal);
        return;
      }
      const rows = await listSignals(deps.pool, reader, { ...query, ...pageWindow(query) });
      ctx.body = offsetBody('signals', rows, query, presentSignal);
    },

    usage: async (ctx: AppContext, { query }: RouteInput<unknown, UsageQuery>) => {
      const now = new Date();
      const from = new Date(query.from ?? startOfUtcMonth(now)).toISOString();
      const to = new Date(query.to ?? now.toISOString()).toISOString();
      if (from >= to) throw new ValidationError([{ path: 'query.to', message: 'must be after from' }], 'The time range is empty.');
      const days = await usageByDay(deps.pool, {
        organizationId: principalOf(ctx).organizationId,
        unit: query.unit,
        from,
        to,
        applicationId: query.applicationId,
      });
      const usage: Usage = {
        unit: query.unit,
        from,
        to,
        applicationId: query.applicationId ?? null,
        quantity: days.reduce((sum, d) => sum + d.quantity, 0),
        days: [...days],
      };
      ctx.body = usage;
    },
  };
}
