import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import type { DatabasePool } from 'slonik';
import type { Agent } from 'undici';
import { request } from 'undici';
import { forEachLimited } from '../concurrency.js';
import {
  announceSenderCall,
  disableEndpoint,
  dueDeliveries,
  findEndpointTarget,
  findSourceEvents,
  fixBodies,
  nextDueAt,
  recordAttempts,
  type AttemptRecord,
  type DueDelivery,
  type EndpointTarget,
} from '../db/repositories/webhook-deliveries.js';
import { retryDelayAfter, shouldDisable, WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_RETRY_DELAYS_MS } from '../domain/webhook-retry.js';
import type { PayloadKey } from '../keys.js';
import { checkedAgent, findCode, messageOf, type AddressPolicy, type Resolver } from '../media/safe-fetch.js';
import { readResources } from './resources.js';
import { openSecret } from './secret-box.js';
import { signedHeaders, signingKey } from './signing.js';
import { presencePayload, type WebhookWakes } from './wakes.js';
import { SEND_CALL_TIMEOUT_MS, type SendDueResult } from '../../workflows/webhook-endpoint/contract.js';

/**
 * The webhook delivery engine (issue 31): sends an endpoint's due deliveries, records every
 * attempt, schedules retries, and disables an endpoint failing for 5 days. The
 * `webhook-endpoint/<id>` workflow calls `sendDue` (through activities/webhooks.ts) in a loop.
 */

/** The response body kept per attempt, at most. */
export const RESPONSE_EXCERPT_BYTES = 1024;
export const ATTEMPT_TIMEOUT_MS = 15_000;
export const USER_AGENT = 'Intake-Webhooks/1';
/** A call's budget: under a steady stream it runs this long (its start-to-close timeout, SEND_CALL_TIMEOUT_MS, is above it). */
export const CALL_BUDGET_MS = 60_000;
/** How long a call that has sent waits for more before it returns to its workflow (decision 0188). */
export const LINGER_MS = 2_000;

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
  /** A call that has sent and finds nothing due waits this long for a wake before it returns (0: it returns). */
  lingerMs?: number;
  attemptTimeoutMs?: number;
  /** How often a running call announces itself again (ANNOUNCE_EVERY_MS; tests a short one). */
  announceEveryMs?: number;
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
  /** This process's wakes (its webhook waker offers them here): without them a call does not linger. */
  wakes?: WebhookWakes;
}

/** What one look found: the endpoint gone or disabled, or its due deliveries with their bodies. */
type Look =
  | { ended: 'gone' | 'disabled' }
  | { ended: null; endpoint: EndpointTarget; due: readonly DueDelivery[]; bodies: Map<string, string | null> };

/**
 * Sends the endpoint's due deliveries (see SendDueResult) in batches of `batchSize`, as long as
 * batches find some (what is committed meanwhile is taken by the same call). When a batch finds
 * none, a call that has sent lingers (`lingerMs`) for a wake from this process's waker before it
 * returns: under a steady stream a call runs for its budget (60 s) instead of a workflow
 * round trip whenever the queue is empty for a moment (decision 0188). A delivery attempted in
 * this call is not taken again by it, and a batch with a failed attempt ends the call, so that
 * retries keep their schedule (the next call takes them when due). A batch costs a fixed number
 * of statements: its due deliveries, their events, their resources (one query per kind) and bodies
 * the first time, then the attempts, recorded as they end in group commits (one transaction for
 * whatever ended meanwhile).
 *
 * A batch of more than one round of sends looks for the next batch while it sends (decision 0210, fifth part):
 * that look leaves out the deliveries the call holds (in flight, or their attempts not yet
 * recorded), so it never takes one twice, and a subject whose delivery is in flight has none in it
 * (events of one resource stay in order). Before a look that found nothing is believed, the call's
 * attempts are recorded and it looks once more: a subject's next delivery is due only once the one
 * before it is recorded.
 */
export async function sendDue(deps: SendDueDeps, endpointId: string): Promise<SendDueResult> {
  const s = deps.sender.settings;
  const now = s.now ?? (() => new Date());
  const batchSize = s.batchSize ?? 200;
  const concurrency = s.concurrency ?? 8;
  const budgetMs = s.budgetMs ?? CALL_BUDGET_MS;
  const lingerMs = s.lingerMs ?? LINGER_MS;
  const callStartedAt = now();
  const started = Date.now();
  const log = new AttemptLog(deps.pool, endpointId, s);
  const stopped = () => log.halted || deps.signal?.aborted === true || Date.now() - started > budgetMs;
  const here = deps.wakes?.enter(endpointId);
  // A call runs for minutes: every look sees the endpoint as it is now (a new URL, a rotated
  // secret, disabled or deleted meanwhile).
  const look = async (): Promise<Look> => {
    here?.take();
    const endpoint = await findEndpointTarget(deps.pool, endpointId);
    if (!endpoint) return { ended: 'gone' };
    if (!endpoint.enabled) return { ended: 'disabled' };
    const due = await dueDeliveries(deps.pool, endpointId, {
      now: now(),
      limit: batchSize,
      notAttemptedSince: callStartedAt,
      except: log.held(),
    });
    log.hold(due.map((d) => d.id));
    return { ended: null, endpoint, due, bodies: await batchBodies(deps.pool, due) };
  };
  // A look started ahead may be left unused (the call stops): its failure is then nobody's.
  const ahead = (): Promise<Look> => {
    const p = look();
    p.catch(() => undefined);
    return p;
  };
  let attempted = 0;
  let more = false;
  let ended: 'gone' | 'disabled' | null = null;
  // The other workers' wakers leave this endpoint's wakes to this process while the call runs
  // (decision 0218). Announced again every ANNOUNCE_EVERY_MS, for a worker that starts (or whose
  // listener reconnects) meanwhile; one announcement at a time, so that the end comes last.
  const presence = new Announcer(deps, endpointId, Date.now() + SEND_CALL_TIMEOUT_MS);
  let result: SendDueResult;
  try {
    let next: Promise<Look> = ahead();
    for (;;) {
      const found = await next;
      if (found.ended) {
        ended = found.ended;
        break;
      }
      const { endpoint, due, bodies } = found;
      if (due.length === 0) {
        // What the call holds may hide a subject's next delivery: recorded first, then looked for.
        if (log.holding) {
          await log.settled();
          next = ahead();
          continue;
        }
        if (!here || attempted === 0 || lingerMs <= 0 || stopped()) break;
        const left = budgetMs - (Date.now() - started);
        if (await here.wait(Math.min(lingerMs, left), deps.signal)) {
          next = ahead();
          continue;
        }
        break;
      }
      const secrets = signingSecrets(endpoint, s.payloadKeys, now()).map(signingKey);
      // A batch of one round of sends is over in moments: the next look follows its attempts' records.
      let following: Promise<Look> | null = due.length > concurrency && !stopped() ? ahead() : null;
      let begun = 0;
      let failed = false;
      await forEachLimited(
        due,
        concurrency,
        async (delivery) => {
          begun++;
          const done = await attempt(deps.sender, now, endpoint.url, secrets, delivery, bodies.get(delivery.id) ?? null);
          if (done.outcome.error !== null) failed = true;
          log.add(done);
          deps.heartbeat?.();
        },
        stopped,
      );
      attempted += begun;
      if (begun < due.length || failed || stopped()) {
        more = true;
        break;
      }
      if (!following) {
        await log.settled();
        following = ahead();
      }
      next = following;
    }
    await log.settled();
    result = ended
      ? { endpoint: ended, attempted, more: false, nextDueAt: null }
      : log.disabled
        ? { endpoint: 'disabled', attempted, more: false, nextDueAt: null }
        : { endpoint: 'active', attempted, more, nextDueAt: await nextDueAt(deps.pool, endpointId) };
  } catch (error) {
    here?.leave();
    // A look that failed (the database) leaves the attempts already made recorded, as a call that
    // waited for its records before each look did: the next call does not send them again.
    await log.settled().catch(() => undefined);
    await presence.end();
    throw error;
  }
  // A wake this process's waker handed to the call after its last look (leave() and this check run
  // in one turn of the event loop: a later wake finds no call here, and the waker signals the
  // workflow). A call that sent is called again at once; one that sent nothing reads when the next
  // delivery is due again, and its workflow waits at least MIN_WAIT_MS: deliveries waiting behind
  // their subject's retry keep waking a call that can send none of them, and that is no hot loop.
  if (here?.leave() && result.endpoint === 'active') {
    const sent = result.attempted > 0;
    result = sent
      ? { ...result, more: true }
      : { ...result, nextDueAt: await nextDueAt(deps.pool, endpointId).catch(() => result.nextDueAt) };
  }
  await presence.end();
  return result;
}

/** How often a running call announces itself again. */
export const ANNOUNCE_EVERY_MS = 15_000;

/**
 * A call's announcements (`untilMs`: the latest it can run; 0: it ended), one at a time, best
 * effort: a lost one only costs signals. Nothing is announced by a call without its process's wakes.
 */
class Announcer {
  private chain: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: SendDueDeps,
    private readonly endpointId: string,
    private readonly untilMs: number,
  ) {
    if (!deps.wakes) return;
    this.send(untilMs);
    this.timer = setInterval(() => this.send(this.untilMs), deps.sender.settings.announceEveryMs ?? ANNOUNCE_EVERY_MS);
    this.timer.unref();
  }

  /** The call ended: the last announcement, after every one before it. */
  async end(): Promise<void> {
    if (!this.deps.wakes) return;
    clearInterval(this.timer);
    this.send(0);
    await this.chain;
  }

  private send(untilMs: number): void {
    const wakes = this.deps.wakes!;
    const payload = presencePayload({ endpointId: this.endpointId, processId: wakes.processId, untilMs });
    this.chain = this.chain.then(() => announceSenderCall(this.deps.pool, payload).catch(() => undefined));
  }
}

/** The bodies of a batch: fixed already, or built now from the event and the resource and fixed (null: the event was purged). */
async function batchBodies(pool: DatabasePool, due: readonly DueDelivery[]): Promise<Map<string, string | null>> {
  const bodies = new Map<string, string | null>(due.map((d) => [d.id, d.body]));
  const unfixed = due.filter((d) => d.body === null && d.event_id !== null);
  const events = await findSourceEvents(
    pool,
    unfixed.map((d) => d.event_id!),
  );
  const found = unfixed.flatMap((d) => {
    const event = events.get(d.event_id!);
    return event ? [{ id: d.id, event }] : [];
  });
  const built: { id: string; body: string }[] = [];
  for (const [organizationId, group] of Map.groupBy(found, (f) => f.event.organization_id)) {
    const resources = await readResources(
      pool,
      organizationId,
      group.map((f) => f.event),
    );
    group.forEach((f, i) => built.push({ id: f.id, body: eventBody(f.event, resources[i]) }));
  }
  for (const [id, body] of await fixBodies(pool, built)) bodies.set(id, body);
  return bodies;
}

/** One attempt of one delivery (not recorded yet). */
async function attempt(
  sender: WebhookSender,
  now: () => Date,
  url: string,
  secrets: KeyObject[],
  delivery: DueDelivery,
  body: string | null,
): Promise<{ delivery: DueDelivery; body: string | null; attemptedAt: Date; outcome: AttemptOutcome }> {
  const attemptedAt = now();
  const outcome: AttemptOutcome =
    body === null
      ? { status: null, excerpt: null, error: 'the event was purged before its first attempt', durationMs: 0 }
      : await sender.post(url, signedHeaders(secrets, delivery.id, Math.floor(attemptedAt.getTime() / 1000), body), body);
  return { delivery, body, attemptedAt, outcome };
}

/**
 * The attempts of one call, recorded as they end: one transaction at a time for everything that
 * ended meanwhile (a group commit), so that recording costs a few statements per batch, not per
 * attempt. After a failure it disables an endpoint failing for too long (stopping the call).
 */
class AttemptLog {
  /** The endpoint was disabled by this call. */
  disabled = false;
  private queue: AttemptRecord[] = [];
  private flushing: Promise<void> | null = null;
  private failure: Error | null = null;
  /** Deliveries the call took whose attempts are not recorded yet (a look leaves them out). */
  private readonly unrecorded = new Set<string>();

  constructor(
    private readonly pool: DatabasePool,
    private readonly endpointId: string,
    private readonly s: WebhookDeliverySettings,
  ) {}

  /** The call took these deliveries: held until their attempts are recorded. */
  hold(ids: readonly string[]): void {
    for (const id of ids) this.unrecorded.add(id);
  }

  held(): string[] {
    return [...this.unrecorded];
  }

  /** Some delivery the call took is not recorded yet. */
  get holding(): boolean {
    return this.unrecorded.size > 0;
  }

  add(a: Awaited<ReturnType<typeof attempt>>): void {
    const succeeded = a.outcome.error === null;
    const delay = a.body === null ? null : retryDelayAfter(a.delivery.attempts + 1, this.s.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS);
    this.queue.push({
      deliveryId: a.delivery.id,
      attemptedAt: a.attemptedAt,
      durationMs: a.outcome.durationMs,
      responseStatus: a.outcome.status,
      responseExcerpt: a.outcome.excerpt,
      error: a.outcome.error,
      succeeded,
      nextAttemptAt: succeeded || delay === null ? null : new Date(a.attemptedAt.getTime() + delay),
    });
    this.kick();
  }

  /** Starts a drain unless one runs; a drain ending re-checks the queue (an attempt may have ended meanwhile). */
  private kick(): void {
    if (this.flushing || this.failure || this.queue.length === 0) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      this.kick();
    });
  }

  /** Every attempt added so far is recorded (or the first recording error is thrown). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }

  /** Start no more attempts: the endpoint was disabled, or recording failed. */
  get halted(): boolean {
    return this.disabled || this.failure !== null;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        const { failingSince } = await recordAttempts(this.pool, this.endpointId, batch);
        for (const a of batch) this.unrecorded.delete(a.deliveryId);
        const last = batch.at(-1)!;
        if (failingSince === null || this.disabled) continue;
        if (!shouldDisable(new Date(failingSince), last.attemptedAt, this.s.disableAfterMs ?? WEBHOOK_DISABLE_AFTER_MS)) continue;
        this.disabled = await disableEndpoint(this.pool, this.endpointId, `failing since ${failingSince}: ${last.error}`, last.attemptedAt);
      }
    } catch (e) {
      this.failure ??= e instanceof Error ? e : new Error(String(e));
    }
  }
}
