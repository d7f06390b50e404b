import type { DatabasePool } from 'slonik';
import {
  createTestDelivery,
  findDelivery,
  findOrganizationEndpoint,
  listAttempts,
  listDeliveries,
  redeliver,
  type DeliveryStatus,
} from '../db/repositories/webhook-deliveries.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { presentDelivery, presentDeliveryDetail, type Delivery, type DeliveryDetail } from '../contracts/webhook-deliveries.js';
import { testBody } from './delivery.js';

/**
 * An organization's view of its endpoints' deliveries (the REST routes and the CLI): list, one with
 * its attempts, redeliver, send a test event. Redelivery and test events wake the endpoint's sender
 * through the workers' LISTEN (the repository notifies in the same transaction), so neither the API
 * nor the CLI calls Temporal.
 */

async function endpointOf(pool: DatabasePool, organizationId: string, endpointId: string) {
  const endpoint = await findOrganizationEndpoint(pool, organizationId, endpointId);
  if (!endpoint) throw new NotFoundError('Webhook endpoint');
  return endpoint;
}

export async function listEndpointDeliveries(
  pool: DatabasePool,
  organizationId: string,
  endpointId: string,
  o: { status?: DeliveryStatus | undefined; limit: number; offset: number },
): Promise<Delivery[]> {
  await endpointOf(pool, organizationId, endpointId);
  return (await listDeliveries(pool, endpointId, o)).map(presentDelivery);
}

export async function getEndpointDelivery(
  pool: DatabasePool,
  organizationId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryDetail> {
  await endpointOf(pool, organizationId, endpointId);
  const row = await findDelivery(pool, endpointId, deliveryId);
  if (!row) throw new NotFoundError('Webhook delivery');
  return presentDeliveryDetail(row, await listAttempts(pool, row.id));
}

/** Pending again with its `webhook-id` and body, sent now. A disabled endpoint sends nothing: 409. */
export async function redeliverEndpointDelivery(
  pool: DatabasePool,
  organizationId: string,
  endpointId: string,
  deliveryId: string,
): Promise<Delivery> {
  const endpoint = await endpointOf(pool, organizationId, endpointId);
  if (!endpoint.enabled) throw new ConflictError('webhook_endpoint_disabled');
  const row = await redeliver(pool, endpointId, deliveryId);
  if (!row) throw new NotFoundError('Webhook delivery');
  return presentDelivery(row);
}

/** A `webhook.test` delivery to this endpoint only. */
export async function sendTestEvent(pool: DatabasePool, organizationId: string, endpointId: string, now = new Date()): Promise<Delivery> {
  const endpoint = await endpointOf(pool, organizationId, endpointId);
  if (!endpoint.enabled) throw new ConflictError('webhook_endpoint_disabled');
  return presentDelivery(await createTestDelivery(pool, { id: endpoint.id, organizationId }, () => testBody(endpoint.id, now)));
}
