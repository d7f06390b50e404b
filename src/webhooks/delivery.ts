import { isIP } from 'node:net';
import type { DatabasePool } from 'slonik';
import type { Agent } from 'undici';
import { request } from 'undici';
import { forEachLimited } from '../concurrency.js';
import {
  disableEndpoint,
  dueDeliveries,
  findEndpointTarget,
  findSourceEvent,
  fixBody,
  nextDueAt,
  recordAttempt,
  type DueDelivery,
  type EndpointTarget,
} from '../db/repositories/webhook-deliveries.js';
import { retryDelayAfter, shouldDisable, WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_RETRY_DELAYS_MS } from '../domain/webhook-retry.js';
import type { PayloadKey } from '../keys.js';
import { checkedAgent, findCode, messageOf, type AddressPolicy, type Resolver } from '../media/safe-fetch.js';
import { readResource } from './resources.js';
import { openSecret } from './secret-box.js';
import { signedHeaders } from './signing.js';
import type { SendDueResult } from '../../workflows/webhook-endpoint/contract.js';

/**
 * The webhook delivery engine (issue 31): sends an endpoint's due deliveries, records every
 * attempt, schedules retries, and disables an endpoint failing for 5 days. The
 * `webhook-endpoint/<id>` workflow calls `sendDue` (through activities/webhooks.ts) in a loop.
 */

/** The response body kept per attempt, at most. */
export const RESPONSE_EXCERPT_BYTES = 1024;
export const ATTEMPT_TIMEOUT_MS = 15_000;
export const USER_AGENT = 'Intake-Webhooks/1';

export interface WebhookDeliverySettings {
  /** Open the sealed secrets (TEMPORAL_PAYLOAD_KEYS, or derived from SIGNING_SECRET). */
  payloadKeys: readonly PayloadKey[];
  /** Which addresses may be dialled (webhookAddressPolicy; tests their own). */
  policy: AddressPolicy;
  resolver?: Resolver;
  /** The retry schedule (tests inject a fast one). */
  retryDelaysMs?: readonly number[];
  disableAfterMs?: number;
  /** The clock (tests inject one to reach the disabling threshold). */
  now?: () => Date;
  /** Deliveries in flight per endpoint. */
  concurrency?: number;
  /** Deliveries per call. */
  batchSize?: number;
  /** A call starts no delivery after this long (the activity's start-to-close timeout bounds the rest). */
  budgetMs?: number;
  attemptTimeoutMs?: number;
}

/** One worker's connections to receivers: every one dialled through the connect-time address check. */
export class WebhookSender {
  readonly agent: Agent;
  constructor(readonly settings: WebhookDeliverySettings) {
    const timeout = settings.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.agent = checkedAgent({ policy: settings.policy, resolver: settings.resolver, headersTimeoutMs: timeout, bodyTimeoutMs: timeout });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** One POST: never follows a redirect; reads at most RESPONSE_EXCERPT_BYTES of the answer. */
  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const problem = this.urlProblem(url);
    if (problem) return { status: null, excerpt: null, error: problem, durationMs: elapsed() };
    const timeoutMs = this.settings.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
      });
      const excerpt = await readExcerpt(res.body);
      const status = res.statusCode;
      const error =
        status >= 200 && status < 300
          ? null
          : status >= 300 && status < 400
            ? `HTTP ${status}: redirects are not followed`
            : `HTTP ${status}`;
      return { status, excerpt, error, durationMs: elapsed() };
    } catch (e) {
      return {
        status: null,
        excerpt: null,
        error: signal.aborted ? `timed out after ${timeoutMs / 1000} s` : networkError(e),
        durationMs: elapsed(),
      };
    }
  }

  /** Scheme and credentials, and a literal address (the connect-time check sees only names). */
  private urlProblem(raw: string): string | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'the URL is not absolute';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} is not allowed`;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const problem = isIP(host) ? this.settings.policy.problem(host) : null;
    return problem ? `blocked: address ${host} ${problem}` : null;
  }
}

export interface AttemptOutcome {
  status: number | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) break;
    }
  } finally {
    body.destroy();
  }
  // A multi-byte character cut at the limit becomes U+FFFD: an excerpt, not the body.
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
}

function networkError(error: unknown): string {
  const code = findCode(error);
  if (code === 'EBLOCKED') return `blocked: ${messageOf(error)}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return `DNS: ${code}`;
  return code ? `network: ${code}` : 'network error';
}

/**
 * The body of an event's delivery: `{type, timestamp, data}`, `timestamp` when the event was
 * recorded, `data` its payload (the ids of what changed, and the event's facts: an errorCode, a
 * bot's terminal state) and the resource as the REST API shows it (see src/webhooks/resources.ts).
 */
export function eventBody(
  event: { type: string; recorded_at: string; payload: Record<string, unknown> },
  resource: { key: string; value: unknown } | null = null,
): string {
  const data = resource ? { ...event.payload, [resource.key]: resource.value } : event.payload;
  return JSON.stringify({ type: event.type, timestamp: event.recorded_at, data });
}

/** The body of a `webhook.test` delivery. */
export function testBody(endpointId: string, at: Date): string {
  return JSON.stringify({ type: 'webhook.test', timestamp: at.toISOString(), data: { endpointId } });
}

/** The secrets that sign: the current one, and the previous one while it is still valid after a rotation. */
export function signingSecrets(endpoint: EndpointTarget, keys: readonly PayloadKey[], now: Date): string[] {
  const secrets = [openSecret(keys, endpoint.secret_sealed)];
  if (
    endpoint.previous_secret_sealed &&
    endpoint.previous_secret_expires_at &&
    Date.parse(endpoint.previous_secret_expires_at) > now.getTime()
  )
    secrets.push(openSecret(keys, endpoint.previous_secret_sealed));
  return secrets;
}

export interface SendDueDeps {
  pool: DatabasePool;
  sender: WebhookSender;
  heartbeat?: () => void;
  signal?: AbortSignal;
}

/** Sends the endpoint's due deliveries (a batch, within the time budget); see SendDueResult. */
export async function sendDue(deps: SendDueDeps, endpointId: string): Promise<SendDueResult> {
  const s = deps.sender.settings;
  const now = s.now ?? (() => new Date());
  const endpoint = await findEndpointTarget(deps.pool, endpointId);
  if (!endpoint) return { endpoint: 'gone', attempted: 0, more: false, nextDueAt: null };
  if (!endpoint.enabled) return { endpoint: 'disabled', attempted: 0, more: false, nextDueAt: null };
  const batchSize = s.batchSize ?? 50;
  const due = await dueDeliveries(deps.pool, endpointId, now(), batchSize);
  const started = Date.now();
  const budgetMs = s.budgetMs ?? 60_000;
  let attempted = 0;
  let disabled = false;
  await forEachLimited(
    due,
    s.concurrency ?? 8,
    async (delivery) => {
      attempted++;
      if (await attempt(deps, endpoint, delivery)) disabled = true;
      deps.heartbeat?.();
    },
    () => disabled || deps.signal?.aborted === true || Date.now() - started > budgetMs,
  );
  if (disabled) return { endpoint: 'disabled', attempted, more: false, nextDueAt: null };
  return {
    endpoint: 'active',
    attempted,
    more: attempted < due.length || due.length === batchSize,
    nextDueAt: await nextDueAt(deps.pool, endpointId),
  };
}

/** One attempt of one delivery, recorded; true when it disabled the endpoint. */
async function attempt(deps: SendDueDeps, endpoint: EndpointTarget, delivery: DueDelivery): Promise<boolean> {
  const s = deps.sender.settings;
  const now = s.now ?? (() => new Date());
  const body = delivery.body ?? (await firstBody(deps.pool, delivery));
  const attemptedAt = now();
  const outcome: AttemptOutcome =
    body === null
      ? { status: null, excerpt: null, error: 'the event was purged before its first attempt', durationMs: 0 }
      : await deps.sender.post(
          endpoint.url,
          signedHeaders(signingSecrets(endpoint, s.payloadKeys, attemptedAt), delivery.id, Math.floor(attemptedAt.getTime() / 1000), body),
          body,
        );
  const succeeded = outcome.error === null;
  const attemptsMade = delivery.attempts + 1;
  const delay = body === null ? null : retryDelayAfter(attemptsMade, s.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS);
  const { failingSince } = await recordAttempt(deps.pool, {
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    attemptedAt,
    durationMs: outcome.durationMs,
    responseStatus: outcome.status,
    responseExcerpt: outcome.excerpt,
    error: outcome.error,
    succeeded,
    nextAttemptAt: succeeded || delay === null ? null : new Date(attemptedAt.getTime() + delay),
  });
  if (succeeded || failingSince === null) return false;
  if (!shouldDisable(new Date(failingSince), attemptedAt, s.disableAfterMs ?? WEBHOOK_DISABLE_AFTER_MS)) return false;
  return disableEndpoint(deps.pool, endpoint.id, `failing since ${failingSince}: ${outcome.error}`, attemptedAt);
}

async function firstBody(pool: DatabasePool, delivery: DueDelivery): Promise<string | null> {
  if (delivery.event_id === null) return null;
  const event = await findSourceEvent(pool, delivery.event_id);
  if (!event) return null;
  const resource = await readResource(pool, event.organization_id, event.type, event.payload);
  return fixBody(pool, delivery.id, eventBody(event, resource));
}
