import { DELIVERY_STATUSES, findEndpointTarget, type DeliveryStatus } from '../../db/repositories/webhook-deliveries.js';
import { isUuid } from '../../db/uuid.js';
import { getEndpointDelivery, listEndpointDeliveries, redeliverEndpointDelivery, sendTestEvent } from '../../webhooks/deliveries.js';
import { flags, int, optStr, str } from '../args.js';
import { CliError, type CliContext } from '../context.js';

/** The endpoint's organization: the service functions answer for an organization, the operator's CLI for any. */
async function organizationOf(ctx: CliContext, endpointId: string): Promise<string> {
  const endpoint = isUuid(endpointId) ? await findEndpointTarget(await ctx.db(), endpointId) : null;
  if (!endpoint) throw new CliError(`webhook endpoint ${endpointId} not found`);
  return endpoint.organization_id;
}

/** `intake webhook deliveries --endpoint E [--status S] [--limit N] [--delivery D]`: newest first, or one with its attempts. */
export async function webhookDeliveries(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { endpoint: 'string', status: 'string', limit: 'string', delivery: 'string' });
  const endpointId = str(f, 'endpoint');
  const organizationId = await organizationOf(ctx, endpointId);
  const delivery = optStr(f, 'delivery');
  if (delivery) return getEndpointDelivery(await ctx.db(), organizationId, endpointId, delivery);
  const status = optStr(f, 'status');
  if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status))
    throw new CliError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`, 2);
  const limit = int(f, 'limit', { min: 1, max: 100, fallback: 20 });
  const deliveries = await listEndpointDeliveries(await ctx.db(), organizationId, endpointId, {
    status: status as DeliveryStatus | undefined,
    limit,
    offset: 0,
  });
  return { deliveries };
}

/** `intake webhook redeliver --endpoint E --delivery D`: pending again under the same webhook-id, sent now. */
export async function webhookRedeliver(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { endpoint: 'string', delivery: 'string' });
  const endpointId = str(f, 'endpoint');
  return redeliverEndpointDelivery(await ctx.db(), await organizationOf(ctx, endpointId), endpointId, str(f, 'delivery'));
}

/** `intake webhook test --endpoint E`: a webhook.test delivery to that endpoint. */
export async function webhookTest(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { endpoint: 'string' });
  const endpointId = str(f, 'endpoint');
  return sendTestEvent(await ctx.db(), await organizationOf(ctx, endpointId), endpointId);
}
