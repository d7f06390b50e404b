import { PassThrough } from 'node:stream';
import { requireOwned } from '../../src/auth/ownership.js';
import { exportOrganization, streamWriter } from '../../src/lifecycle/export.js';
import { findOrganization, listCreditTransactions } from '../../src/db/repositories/organizations.js';
import { findUser, listUsers } from '../../src/db/repositories/users.js';
import { NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow, type PageQuery } from '../paging.js';
import type { RouteInput } from '../routes.js';
import { presentCreditTransaction, presentOrganization, presentUser } from './schemas.js';

export function managementHandlers(deps: AppDeps) {
  return {
    getOrganization: async (ctx: AppContext) => {
      const org = await findOrganization(deps.pool, principalOf(ctx).organizationId);
      if (!org) throw new NotFoundError('Organization');
      ctx.body = presentOrganization(org);
    },
    /** Streams the export: Koa pipes the stream while the export writes into it, a batch at a time. */
    exportOrganization: async (ctx: AppContext) => {
      const organizationId = principalOf(ctx).organizationId;
      const stream = new PassThrough();
      ctx.status = 200;
      ctx.type = 'application/x-ndjson';
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Disposition', `attachment; filename="intake-export-${organizationId}.ndjson"`);
      ctx.body = stream;
      void exportOrganization(deps.pool, organizationId, streamWriter(stream)).then(
        () => stream.end(),
        (error: unknown) => {
          // The status is sent: the stream ends without its `end` line.
          // The connection is dropped (a chunked response left unfinished), so no client mistakes it for complete.
          deps.logger.warn({ err: error, organizationId }, 'organization export cut short');
          stream.destroy();
          ctx.res.destroy();
        },
      );
    },
    listUsers: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const users = await listUsers(deps.pool, { organizationId: principalOf(ctx).organizationId }, pageWindow(query));
      ctx.body = pageBody('users', users, query, presentUser);
    },
    listCreditTransactions: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const rows = await listCreditTransactions(deps.pool, principalOf(ctx).organizationId, pageWindow(query));
      ctx.body = pageBody('transactions', rows, query, presentCreditTransaction);
    },
    getUser: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const user = requireOwned(principalOf(ctx), 'User', await findUser(deps.pool, params.userId ?? ''));
      ctx.body = presentUser(user);
    },
  };
}
