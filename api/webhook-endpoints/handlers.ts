import {
  changeEndpoint,
  createEndpoint,
  endpointPolicy,
  getEndpoint,
  listEndpoints,
  presentWebhookEndpoint,
  removeEndpoint,
  rotateEndpointSecret,
  webhookSecretKeys,
  type NewEndpoint,
} from '../../src/webhooks/endpoints.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import type { CreateWebhookEndpointBody, PageQuery, WebhookEndpointPatch, WebhookEndpointWithSecret } from './schemas.js';

export const WEBHOOK_ENDPOINTS_PATH = '/v3/rest/webhook-endpoints';

/** The answer that carries the secret: never cached anywhere on the way. */
function withSecret(ctx: AppContext, { endpoint, secret }: NewEndpoint): void {
  ctx.set('Cache-Control', 'no-store');
  const body: WebhookEndpointWithSecret = { ...presentWebhookEndpoint(endpoint), secret };
  ctx.body = body;
}

export function webhookEndpointHandlers(deps: AppDeps) {
  const policy = endpointPolicy(deps.config);
  const orgOf = (ctx: AppContext) => principalOf(ctx).organizationId;
  const idOf = (params: Record<string, string>) => params.endpointId ?? '';

  return {
    create: async (ctx: AppContext, { body, db }: RouteInput<CreateWebhookEndpointBody, unknown>) => {
      const created = await createEndpoint(db, webhookSecretKeys(deps.config), policy, { organizationId: orgOf(ctx), ...body });
      ctx.status = 201;
      ctx.set('Location', `${WEBHOOK_ENDPOINTS_PATH}/${created.endpoint.id}`);
      withSecret(ctx, created);
    },

    list: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const rows = await listEndpoints(deps.pool, orgOf(ctx), pageWindow(query));
      ctx.body = pageBody('endpoints', rows, query, presentWebhookEndpoint);
    },

    get: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = presentWebhookEndpoint(await getEndpoint(deps.pool, orgOf(ctx), idOf(params)));
    },

    update: async (ctx: AppContext, { body, params }: RouteInput<WebhookEndpointPatch, unknown>) => {
      ctx.body = presentWebhookEndpoint(await changeEndpoint(deps.pool, policy, orgOf(ctx), idOf(params), body));
    },

    remove: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      await removeEndpoint(deps.pool, orgOf(ctx), idOf(params));
      ctx.status = 204;
    },

    rotateSecret: async (ctx: AppContext, { params, db }: RouteInput<unknown, unknown>) => {
      withSecret(ctx, await rotateEndpointSecret(db, webhookSecretKeys(deps.config), orgOf(ctx), idOf(params)));
    },
  };
}
