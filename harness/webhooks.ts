import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type DatabasePool } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { sealSecret } from '../src/webhooks/secret-box.js';
import { generateWebhookSecret } from '../src/webhooks/signing.js';
import { testConfig } from './config.js';

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

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** Which of the receiver's secrets verified it (standardwebhooks' verifier). */
  verifiedWith: number[];
  /** When the receiver sent its answer's status (epoch ms, sub-millisecond); null: not answered (yet), or `hang`. */
  answeredAt: number | null;
}

/** How the receiver answers a request: a status, or `hang` (never answers; the sender times out). */
export type Answer = number | 'hang';

/** The wall clock with the monotonic clock's resolution (comparable with PostgreSQL's timestamps on the same machine). */
const epochMs = () => performance.timeOrigin + performance.now();

/**
 * A webhook receiver on 127.0.0.1 that verifies every request with the npm `standardwebhooks`
 * package (tests, and the webhook-delivery benchmark).
 */
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
          answeredAt: null,
        };
        this.received.push(r);
        void Promise.resolve(this.answer(r, this.received.length - 1)).then((a) => {
          if (a === 'hang') {
            const end = () => res.destroy();
            this.hanging.add(end);
            res.on('close', () => this.hanging.delete(end));
            return;
          }
          r.answeredAt = epochMs();
          // A 204 has no body (node:http drops it).
          res.writeHead(a, { 'content-type': 'text/plain' }).end(`answer ${a} `.repeat(200));
        });
      });
    });
    // node:http's default keep-alive (5 s, hinted in `Keep-Alive: timeout=5`): undici reuses a
    // connection until 2 s before the hint, so a hint of 1 s (set here before) made every POST a new connection.
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
