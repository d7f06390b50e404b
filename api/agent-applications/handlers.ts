import type { CommonQueryMethods } from 'slonik';
import {
  changeApplication,
  createApplication,
  issueCredential,
  presentApplication,
  presentCredential,
} from '../../src/agents/applications.js';
import {
  deleteApplication,
  findApplication,
  listApplications,
  listCredentials,
  revokeCredential,
  type ApplicationRow,
} from '../../src/db/repositories/agent-applications.js';
import { NotFoundError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import type { CreateApplicationBody, DeleteApplicationQuery, NewCredential, PageQuery, UpdateApplicationBody } from './schemas.js';

export function agentApplicationHandlers(deps: AppDeps) {
  const applicationOf = async (ctx: AppContext, id: string | undefined, db: CommonQueryMethods = deps.pool): Promise<ApplicationRow> => {
    const app = id ? await findApplication(db, principalOf(ctx).organizationId, id) : null;
    if (!app) throw new NotFoundError('Agent application');
    return app;
  };

  return {
    create: async (ctx: AppContext, { body, db }: RouteInput<CreateApplicationBody, unknown>) => {
      const organizationId = principalOf(ctx).organizationId;
      const { name, agentKey, ...settings } = body;
      const app = await createApplication(db, { organizationId, name: name.trim(), agentKey, settings });
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/agent-applications/${app.id}`);
      ctx.body = presentApplication(app);
    },

    list: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const rows = await listApplications(deps.pool, principalOf(ctx).organizationId, pageWindow(query));
      ctx.body = pageBody('applications', rows, query, presentApplication);
    },

    get: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = presentApplication(await applicationOf(ctx, params.applicationId));
    },

    update: async (ctx: AppContext, { body, params }: RouteInput<UpdateApplicationBody, unknown>) => {
      const app = await applicationOf(ctx, params.applicationId);
      const patch = body.name === undefined ? body : { ...body, name: body.name.trim() };
      ctx.body = presentApplication(await changeApplication(deps.pool, app.organization_id, app.id, patch));
    },

    remove: async (ctx: AppContext, { params, query }: RouteInput<unknown, DeleteApplicationQuery>) => {
      const app = params.applicationId
        ? await deleteApplication(deps.pool, principalOf(ctx).organizationId, params.applicationId, query.sessions === 'delete')
        : null;
      if (!app) throw new NotFoundError('Agent application');
      ctx.status = 204;
    },

    createCredential: async (ctx: AppContext, { params, db }: RouteInput<unknown, unknown>) => {
      const app = await applicationOf(ctx, params.applicationId, db);
      const { row, secret } = await issueCredential(db, app);
      ctx.status = 201;
      ctx.set('Cache-Control', 'no-store');
      const created: NewCredential = { ...presentCredential(row), secret };
      ctx.body = created;
    },

    listCredentials: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const app = await applicationOf(ctx, params.applicationId);
      ctx.body = { credentials: (await listCredentials(deps.pool, app.id)).map(presentCredential) };
    },

    revokeCredential: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const app = await applicationOf(ctx, params.applicationId);
      const row = params.credentialId
        ? await revokeCredential(deps.pool, params.credentialId, { organizationId: app.organization_id, applicationId: app.id })
        : null;
      if (!row) throw new NotFoundError('Agent credential');
      ctx.body = presentCredential(row);
    },
  };
}
