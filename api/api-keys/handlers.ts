import { issueApiKey, organizationApiKey, organizationApiKeys, revokeOrganizationKey } from '../../src/auth/api-keys.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import type { CreateApiKeyBody, PageQuery } from './schemas.js';

export const API_KEYS_PATH = '/v3/rest/api-keys';

export function apiKeyHandlers(deps: AppDeps) {
  const orgOf = (ctx: AppContext) => principalOf(ctx).organizationId;
  const idOf = (params: Record<string, string>) => params.apiKeyId ?? '';

  return {
    create: async (ctx: AppContext, { body, db }: RouteInput<CreateApiKeyBody, unknown>) => {
      const key = await issueApiKey(db, principalOf(ctx), { organizationId: orgOf(ctx), name: body.name, scopes: body.scopes });
      ctx.status = 201;
      ctx.set('Location', `${API_KEYS_PATH}/${key.apiKeyId}`);
      // The key itself is in this answer only: never cached on the way.
      ctx.set('Cache-Control', 'no-store');
      ctx.body = key;
    },

    list: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const keys = await organizationApiKeys(deps.pool, orgOf(ctx), pageWindow(query));
      ctx.body = pageBody('apiKeys', keys, query, (k) => k);
    },

    get: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = await organizationApiKey(deps.pool, orgOf(ctx), idOf(params));
    },

    revoke: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      await revokeOrganizationKey(deps.pool, orgOf(ctx), idOf(params));
      ctx.status = 204;
    },
  };
}
