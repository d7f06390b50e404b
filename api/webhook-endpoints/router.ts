import type { AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { managementRateLimit } from '../middleware/rate-limit.js';
import { pageSchema } from '../paging.js';
import type { RouteRegistry } from '../routes.js';
import { WEBHOOK_ENDPOINTS_PATH, webhookEndpointHandlers } from './handlers.js';
import {
  createWebhookEndpointBody,
  pageQuery,
  updateWebhookEndpointBody,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from './schemas.js';

/**
 * Webhook endpoints of the organization (issue 31): where its events are delivered. Behind the
 * `webhooks:manage` scope (an endpoint sends the organization's data to a URL of the caller's
 * choosing): API keys given that scope, and admin users.
 */
export function webhookEndpointRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = webhookEndpointHandlers(deps);
  const auth: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'webhooks:manage' };
  const limit = managementRateLimit(deps);
  const common = { tags: ['webhooks'], auth, middleware: limit.middleware };
  const base = WEBHOOK_ENDPOINTS_PATH;
  const one = { 200: { description: 'The endpoint', schema: webhookEndpointSchema } };

  registry.add({
    ...common,
    method: 'post',
    path: base,
    operationId: 'createWebhookEndpoint',
    idempotent: true,
    summary: 'Register a webhook endpoint; its signing secret is in this answer only',
    body: { schema: createWebhookEndpointBody },
    responses: limit.responses({
      201: {
        description: 'The endpoint with its `whsec_` signing secret (shown this once; rotate it to get a new one)',
        schema: webhookEndpointWithSecretSchema,
        headers: { Location: 'The endpoint' },
      },
    }),
    errors: ['webhook_endpoint_limit_reached'],
    handler: h.create,
  });
  registry.add({
    ...common,
    method: 'get',
    path: base,
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints (never their secrets), oldest first',
    query: pageQuery,
    responses: limit.responses({ 200: { description: 'A page of endpoints', schema: pageSchema('endpoints', webhookEndpointSchema) } }),
    handler: h.list,
  });
  registry.add({
    ...common,
    method: 'get',
    path: `${base}/{endpointId}`,
    operationId: 'getWebhookEndpoint',
    summary: 'Get a webhook endpoint',
    responses: limit.responses(one),
    handler: h.get,
  });
  registry.add({
    ...common,
    method: 'patch',
    path: `${base}/{endpointId}`,
    operationId: 'updateWebhookEndpoint',
    summary: 'Change the URL, event types, description, or enable or disable the endpoint',
    body: { schema: updateWebhookEndpointBody },
    responses: limit.responses(one),
    handler: h.update,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: `${base}/{endpointId}`,
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete an endpoint with its deliveries; deleting it again is 404',
    responses: limit.responses({ 204: { description: 'Deleted' } }),
    handler: h.remove,
  });
  registry.add({
    ...common,
    method: 'post',
    path: `${base}/{endpointId}/rotate-secret`,
    operationId: 'rotateWebhookEndpointSecret',
    // A retried rotation would rotate twice and drop the secret the first answer carried.
    idempotent: true,
    summary: 'Replace the signing secret; the previous one keeps signing for 24 hours (a second rotation within them drops the older one)',
    responses: limit.responses({
      200: { description: 'The endpoint with its new signing secret (shown this once)', schema: webhookEndpointWithSecretSchema },
    }),
    handler: h.rotateSecret,
  });
}
