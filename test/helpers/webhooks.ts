import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { sql, type DatabasePool } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { recordEvents } from '../../src/db/repositories/domain-events.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { TemporalGateway } from '../../src/temporal/gateway.js';
import { sealSecret } from '../../src/webhooks/secret-box.js';
import { generateWebhookSecret } from '../../src/webhooks/signing.js';
import { testConfig, testDataConverter } from '../../harness/config.js';
import { testStack } from '../../harness/stack.js';

/** The payload keys the test workers open secrets with. */
export const TEST_PAYLOAD_KEYS = testConfig().temporal.payloadKeys!;

/**
 * An endpoint made with SQL (the engine's tests do not depend on endpoint management): its secret
 * sealed as the management service seals it.
 */
export async function createTestEndpoint(
  pool: DatabasePool,
  organizationId: string,
  o: { url: string; eventTypes?: string[] | null; enabled?: boolean; secret?: string },
): Promise<{ id: string; secret: string }> {
  const secret = o.secret ?? generateWebhookSecret();
  const id = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO webhook_endpoints (organization_id, url, event_types, enabled, secret_sealed)
    VALUES (${organizationId}, ${o.url}, ${o.eventTypes ? sql.array(o.eventTypes, 'text') : null}, ${o.enabled ?? true},
      ${sealSecret(TEST_PAYLOAD_KEYS, secret)})
    RETURNING id`);
  return { id, secret };
}

/** Records events as the services do: in a transaction of their own. */
export async function record(pool: DatabasePool, ...events: DomainEvent[]): Promise<void> {
  await pool.transaction((tx) => recordEvents(tx, events));
}

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** Which of the receiver's secrets verified it (standardwebhooks' verifier). */
  verifiedWith: number[];
}

/** How the receiver answers a request: a status, or `hang` (never answers; the sender times out). */
export type Answer = number | 'hang';

/** A webhook receiver on 127.0.0.1 that verifies every request with the npm `standardwebhooks` package. */
export class TestReceiver {
  readonly received: Received[] = [];
  private readonly server: Server;
  private readonly hanging = new Set<() => void>();
  answer: (r: Received, index: number) => Answer | Promise<Answer> = () => 200;
  secrets: string[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const h = req.headers;
        const r: Received = {
          id: String(h['webhook-id']),
          timestamp: String(h['webhook-timestamp']),
          signature: String(h['webhook-signature']),
          body,
          headers: h,
          verifiedWith: this.secrets.flatMap((s, i) => {
            try {
              new Webhook(s).verify(body, {
                'webhook-id': String(h['webhook-id']),
                'webhook-timestamp': String(h['webhook-timestamp']),
                'webhook-signature': String(h['webhook-signature']),
              });
              return [i];
            } catch {
              return [];
            }
          }),
        };
        this.received.push(r);
        void Promise.resolve(this.answer(r, this.received.length - 1)).then((a) => {
          if (a === 'hang') {
            const end = () => res.destroy();
            this.hanging.add(end);
            res.on('close', () => this.hanging.delete(end));
            return;
          }
          res.writeHead(a, { 'content-type': 'text/plain' }).end(`answer ${a} `.repeat(200));
        });
      });
    });
    this.server.keepAliveTimeout = 1000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  ids(): string[] {
    return this.received.map((r) => r.id);
  }

  async close(): Promise<void> {
    for (const end of this.hanging) end();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
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
