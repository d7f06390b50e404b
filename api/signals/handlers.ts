// eslint-disable-next-line no-restricted-imports -- issue 30: moved out by the gateway/services work
import { listSignals, usageByDay, type SignalRow } from '../../src/db/repositories/agent-signals.js';
import { ValidationError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import type { SignalsQuery, UsageQuery } from './schemas.js';

const presentSignal = (g: SignalRow) => ({
  id: g.id,
  sessionId: g.session_id,
  applicationId: g.application_id,
  eventExternalId: g.event_external_id,
  source: g.source,
  kind: g.kind,
  rating: g.rating,
  labels: g.labels,
  comment: g.comment,
  summary: g.summary,
  producer: g.producer,
  createdAt: g.created_at,
});

function startOfUtcMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

export function signalHandlers(deps: AppDeps) {
  return {
    listSignals: async (ctx: AppContext, { query }: RouteInput<unknown, SignalsQuery>) => {
      const p = principalOf(ctx);
      const reader = { organizationId: p.organizationId, userId: p.kind === 'user' ? p.userId : null };
      const rows = await listSignals(deps.pool, reader, { ...query, ...pageWindow(query) });
      ctx.body = pageBody('signals', rows, query, presentSignal);
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
      ctx.body = {
        unit: query.unit,
        from,
        to,
        applicationId: query.applicationId ?? null,
        quantity: days.reduce((sum, d) => sum + d.quantity, 0),
        days,
      };
    },
  };
}
