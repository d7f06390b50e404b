import { DELIVERY_STATUSES } from '../../src/db/repositories/webhook-deliveries.js';
import { deliveryDetailSchema, deliverySchema } from '../../src/contracts/webhook-deliveries.js';
import { getEndpointDelivery, listEndpointDeliveries, redeliverEndpointDelivery, sendTestEvent } from '../../src/webhooks/deliveries.js';
import type { AppContext, AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { principalOf } from '../middleware/auth.js';
import { managementRateLimit, organizationRateLimit } from '../middleware/rate-limit.js';
import { pageBody, pageProperties, pageSchema, pageWindow } from '../paging.js';
import type { RouteInput, RouteRegistry } from '../routes.js';
import type { JsonSchema, Validated } from '../validation.js';

const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageProperties, status: { type: 'string', enum: [...DELIVERY_STATUSES] } },
} as const satisfies JsonSchema;
type DeliveriesQuery = Validated<typeof deliveriesQuery>;

/**
 * The deliveries of a webhook endpoint (issue 31): what was sent, how the receiver answered,
 * redelivery, and a test event. Endpoint management itself is api/webhooks/router.ts.
 */
export function webhookDeliveryRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const auth: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'webhooks:manage' };
  const common = { tags: ['webhooks'], auth };
  const base = '/v3/rest/webhook-endpoints/{endpointId}';
  const org = (ctx: AppContext) => principalOf(ctx).organizationId;
  // Reads count as management; a test event or a redelivery makes a delivery retried on failure: a budget of its own (issue 50).
  const reads = managementRateLimit(deps);
  const sends = organizationRateLimit(
    deps,
    'webhook-test',
    deps.config.rateLimits.webhookTestsPerMinute,
    'Over WEBHOOK_TEST_RATE_LIMIT_PER_MINUTE test events and redeliveries a minute for this organization',
  );

  registry.add({
    ...common,
    method: 'get',
    path: `${base}/deliveries`,
    operationId: 'listWebhookDeliveries',
    summary: "List an endpoint's deliveries, newest first",
    middleware: reads.middleware,
    query: deliveriesQuery,
    responses: reads.responses({ 200: { description: 'A page of deliveries', schema: pageSchema('deliveries', deliverySchema) } }),
    handler: async (ctx: AppContext, { query, params }: RouteInput<unknown, DeliveriesQuery>) => {
      const rows = await listEndpointDeliveries(deps.pool, org(ctx), params.endpointId!, { status: query.status, ...pageWindow(query) });
      ctx.body = pageBody('deliveries', rows, query, (d) => d);
    },
  });
  registry.add({
    ...common,
    method: 'get',
    path: `${base}/deliveries/{deliveryId}`,
    operationId: 'getWebhookDelivery',
    summary: 'Get a delivery with its body and every attempt',
    middleware: reads.middleware,
    responses: reads.responses({ 200: { description: 'The delivery', schema: deliveryDetailSchema } }),
    handler: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = await getEndpointDelivery(deps.pool, org(ctx), params.endpointId!, params.deliveryId!);
    },
  });
  registry.add({
    ...common,
    method: 'post',
    path: `${base}/deliveries/{deliveryId}/redeliver`,
    operationId: 'redeliverWebhookDelivery',
    summary: 'Send a delivery again now, with the same webhook-id and body',
    middleware: sends.middleware,
    responses: sends.responses({ 202: { description: 'The delivery, pending again', schema: deliverySchema } }),
    errors: ['webhook_endpoint_disabled'],
    handler: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.status = 202;
      ctx.body = await redeliverEndpointDelivery(deps.pool, org(ctx), params.endpointId!, params.deliveryId!);
    },
  });
  registry.add({
    ...common,
    method: 'post',
    path: `${base}/test`,
    operationId: 'sendWebhookTestEvent',
    summary: 'Send a webhook.test event to this endpoint only',
    middleware: sends.middleware,
    responses: sends.responses({ 202: { description: 'The test delivery, pending', schema: deliverySchema } }),
    errors: ['webhook_endpoint_disabled'],
    handler: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.status = 202;
      ctx.body = await sendTestEvent(deps.pool, org(ctx), params.endpointId!);
    },
  });
}
