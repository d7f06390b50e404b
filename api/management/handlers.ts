import { PassThrough } from 'node:stream';
import { requireOwned } from '../../src/auth/ownership.js';
import { EXPORT_CHUNK_BYTES, exportOrganization, exportSlots, streamWriter } from '../../src/lifecycle/export.js';
import type { Scope } from '../../src/auth/scopes.js';
import { findOrganization, listCreditTransactions } from '../../src/db/repositories/organizations.js';
import { findUser, listUsers } from '../../src/db/repositories/users.js';
import { ForbiddenError, NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow, type PageQuery } from '../paging.js';
import type { RouteInput } from '../routes.js';
import { presentCreditTransaction, presentOrganization, presentUser } from './schemas.js';

/** What the export holds needs each of these besides `admin` (issue 50: an admin-only key reads none of it elsewhere). */
export const EXPORT_READ_SCOPES: readonly Scope[] = ['feedback:read', 'recordings:read', 'agents:read', 'signals:read'];

export function managementHandlers(deps: AppDeps) {
  const slots = exportSlots(deps.config.exports.maxConcurrent);
  const stallSeconds = deps.config.exports.stallTimeoutSeconds;
  return {
    getOrganization: async (ctx: AppContext) => {
      const principal = principalOf(ctx);
      const org = await findOrganization(deps.pool, principal.organizationId);
      if (!org) throw new NotFoundError('Organization');
      ctx.body = presentOrganization(org, principal);
    },
    /**
     * Streams the export: Koa pipes the stream while the export writes into it, a piece at a time,
     * each after the last drained. The answer waits for the organization's export lock (a second
     * export of it is 429); a client that reads nothing for EXPORT_STALL_TIMEOUT_SECONDS is cut off.
     */
    exportOrganization: async (ctx: AppContext) => {
      const principal = principalOf(ctx);
      const missing = EXPORT_READ_SCOPES.filter((s) => !principal.scopes.includes(s));
      if (missing.length)
        throw new ForbiddenError(
          'insufficient_scope',
          `The export holds every kind of data: the credential needs 'admin' and ${EXPORT_READ_SCOPES.map((s) => `'${s}'`).join(', ')}; it lacks ${missing.map((s) => `'${s}'`).join(', ')}.`,
          { requiredScope: missing[0]!, missingScopes: missing },
        );
      const organizationId = principal.organizationId;
      const release = slots.take();
      const stream = new PassThrough({ highWaterMark: EXPORT_CHUNK_BYTES });
      let started!: () => void;
      let streaming = false;
      const ready = new Promise<void>((resolve) => (started = resolve));
      const running = exportOrganization(deps.pool, organizationId, streamWriter(stream, { stallMs: stallSeconds * 1000 }), {
        started,
      }).finally(release);
      let failure: Error | undefined;
      running.then(
        () => stream.end(),
        (error: unknown) => {
          failure = error instanceof Error ? error : new Error('the export failed');
          if (!streaming) return; // before the answer began: the handler throws it
          // The status is sent: the stream ends without its `end` line.
          // The connection is dropped (a chunked response left unfinished), so no client mistakes it for complete.
          deps.logger.warn({ err: error, organizationId }, 'organization export cut short');
          stream.destroy();
          ctx.res.destroy();
        },
      );
      await Promise.race([ready, running]);
      if (failure) throw failure;
      ctx.status = 200;
      ctx.type = 'application/x-ndjson';
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Disposition', `attachment; filename="intake-export-${organizationId}.ndjson"`);
      ctx.body = stream;
      streaming = true;
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
