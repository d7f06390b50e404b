import { Client, Connection } from '@temporalio/client';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { recordEvents } from '../../src/db/repositories/domain-events.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { TemporalGateway } from '../../src/temporal/gateway.js';
import { testDataConverter } from '../../harness/config.js';
import { testStack } from '../../harness/stack.js';

export { createTestEndpoint, TEST_PAYLOAD_KEYS, TestReceiver, type Answer, type Received } from '../../harness/webhooks.js';

/** Records events as the services do: in a transaction of their own. */
export async function record(pool: DatabasePool, ...events: DomainEvent[]): Promise<void> {
  await pool.transaction((tx) => recordEvents(tx, events));
}

/** A Temporal gateway over a client of the test stack (the waker's). */
export async function testGateway(): Promise<{ gateway: TemporalGateway; close(): Promise<void> }> {
  const { temporal } = await testStack();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, dataConverter: testDataConverter() });
  return { gateway: new TemporalGateway(client), close: () => connection.close() };
}

const deliveryState = z.object({
  id: z.string(),
  event_id: z.number().nullable(),
  status: z.string(),
  attempts: z.number(),
  last_error: z.string().nullable(),
  last_response_status: z.number().nullable(),
  body: z.string().nullable(),
});

export function deliveriesOf(pool: DatabasePool, endpointId: string) {
  return pool.any(sql.type(deliveryState)`
    SELECT id, event_id, status, attempts, last_error, last_response_status, body FROM webhook_deliveries
    WHERE endpoint_id = ${endpointId} ORDER BY event_id NULLS FIRST, created_at`);
}

export function attemptsOf(pool: DatabasePool, deliveryId: string) {
  return pool.any(
    sql.type(
      z.object({ response_status: z.number().nullable(), error: z.string().nullable(), response_excerpt: z.string().nullable() }),
    )`SELECT response_status, error, response_excerpt FROM webhook_delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY id`,
  );
}
