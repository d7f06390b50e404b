/**
 * A mixed load of integrators, as the soak (bench/soak.ts) sends it to a fleet's API replicas: per
 * tenant (an organization with an agent application, a feedback source and a webhook endpoint),
 * agent sessions of TURNS turns (a question, a final answer and, every third turn, a rating) sent one
 * event a request and ended by the last; a feedback record every FEEDBACK_EVERY events and a
 * recording with its transcript every RECORDING_EVERY events. A rate of events a second (open loop,
 * 100 ms ticks) drives it; every request is retried with the same body (and, for creates, the same
 * Idempotency-Key) until Intake accepts it, as an integrator's client retries through a fault, so
 * that whatever the database lacks at the end was lost by Intake.
 *
 * What the load keeps is what it was told was accepted: each session's events and answers (the units
 * it will be charged), each feedback record and recording. `settle()` checks each ended session once
 * it is processed (its events all stored and processed, one usage record per answer) and deletes it
 * through the API, and deletes recordings and feedback records once read back, so that the live data
 * stays the same size while the soak runs and the database's growth is what Intake keeps on its own.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { sleep } from '../src/dev/net.js';
import type { AgentEvent } from '../src/domain/agent-ingest.js';
import { assistantMessage, feedbackEvent, userMessage } from '../harness/agents.js';

const TURNS = 10;
/** Turns 2, 5, 8: a question, an answer and a rating; the others a question and an answer. */
const EVENTS_PER_SESSION = TURNS * 2 + Math.floor(TURNS / 3);
const FEEDBACK_EVERY = 25;
const RECORDING_EVERY = 150;
/** Live sessions per tenant: each has at most one request in flight, so that its last request ends it. */
const SESSIONS_PER_TENANT = 24;
const RETRY_MS = [100, 250, 500, 1000, 2000];

/** An answer of Intake's: its status and JSON body (null: none). */
export interface Answer {
  status: number;
  body: { id?: string; sessionId?: string; errorCode?: string; [field: string]: unknown } | null;
}

export interface Tenant {
  organizationId: string;
  apiKey: string;
  agentKey: string;
  agentSecret: string;
  sourceId: string;
  endpointId: string;
  /** The endpoint's signing secret (whsec_…): the receiver verifies every delivery with it. */
  endpointSecret: string;
}

interface Session {
  tenant: Tenant;
  externalId: string;
  sent: number;
  answers: number;
  busy: boolean;
  id?: string;
  endedAt?: number;
}

export interface LoadCounts {
  requests: number;
  retries: number;
  /** Retries by what was answered: the status (and `errorCode` of a 4xx), or `connection` when none was. */
  retriesBy: Record<string, number>;
  /** Requests Intake refused with a 4xx other than 409 in-progress and 429: the load's own bug or Intake's. */
  refused: number;
  events: number;
  answers: number;
  sessionsEnded: number;
  sessionsVerified: number;
  sessionsDeleted: number;
  feedbackRecords: number;
  /** Feedback records a retry found already made (409 `duplicate_external_id`, the record's id in the body). */
  feedbackFoundByExternalId: number;
  recordings: number;
  recordingsVerified: number;
  /** Sessions found with fewer events, unprocessed events or a usage count other than its answers. */
  sessionMismatches: string[];
  /** Per-tenant: events accepted and answers (units charged). */
  byTenant: Record<string, { events: number; answers: number }>;
}

/** The replicas behind an imaginary load balancer: round robin over the ones not marked down. */
export class Replicas {
  private turn = 0;
  private readonly downUntil = new Map<string, number>();
  constructor(readonly urls: string[]) {}

  pick(): string {
    const now = Date.now();
    for (let i = 0; i < this.urls.length; i++) {
      const url = this.urls[this.turn++ % this.urls.length]!;
      if ((this.downUntil.get(url) ?? 0) <= now) return url;
    }
    return this.urls[this.turn++ % this.urls.length]!;
  }

  /** A replica that refused a connection is left out for a while, as a load balancer's health check would. */
  markDown(url: string): void {
    this.downUntil.set(url, Date.now() + 2000);
  }
}

export class MixedLoad {
  readonly counts: LoadCounts = {
    requests: 0,
    retries: 0,
    retriesBy: {},
    refused: 0,
    events: 0,
    answers: 0,
    sessionsEnded: 0,
    sessionsVerified: 0,
    sessionsDeleted: 0,
    feedbackRecords: 0,
    feedbackFoundByExternalId: 0,
    recordings: 0,
    recordingsVerified: 0,
    sessionMismatches: [],
    byTenant: {},
  };
  readonly refusals: string[] = [];
  private readonly live: Session[] = [];
  private readonly ended: Session[] = [];
  private readonly recordingsToCheck: { tenant: Tenant; id: string }[] = [];
  private readonly recordsToDelete: { tenant: Tenant; id: string }[] = [];
  private inFlight = new Set<Promise<unknown>>();
  private stopped = false;
  private sinceFeedback = 0;
  private sinceRecording = 0;

  constructor(
    private readonly replicas: Replicas,
    readonly tenants: Tenant[],
    private readonly pool: pg.Pool,
  ) {
    for (const t of tenants) this.counts.byTenant[t.organizationId] = { events: 0, answers: 0 };
  }

  /**
   * A request through a replica, retried with the same body until it is answered below 500 (429 and
   * 409 `idempotency_key_in_progress` retried too). Resolves with the answer; a refusal is counted.
   */
  async send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
    this.counts.requests++;
    for (let attempt = 0; ; attempt++) {
      const url = this.replicas.pick();
      let why = 'connection';
      try {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        const parsed = text ? (JSON.parse(text) as Answer['body']) : null;
        const retry =
          res.status >= 500 || res.status === 429 || (res.status === 409 && parsed?.errorCode === 'idempotency_key_in_progress');
        if (!retry) {
          const known = res.status === 409 && parsed?.errorCode === 'duplicate_external_id';
          if (res.status >= 400 && res.status !== 404 && !known) {
            this.counts.refused++;
            if (this.refusals.length < 20) this.refusals.push(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
          }
          return { status: res.status, body: parsed };
        }
        why = res.status < 500 ? `${res.status} ${parsed?.errorCode ?? ''}`.trim() : String(res.status);
      } catch (error) {
        if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') this.replicas.markDown(url);
      }
      this.counts.retries++;
      this.counts.retriesBy[why] = (this.counts.retriesBy[why] ?? 0) + 1;
      await sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!);
    }
  }

  private newSession(tenant: Tenant): Session {
    const session: Session = { tenant, externalId: `soak-${randomUUID()}`, sent: 0, answers: 0, busy: false };
    this.live.push(session);
    return session;
  }

  /** Keeps SESSIONS_PER_TENANT live sessions for each tenant. */
  private refill(): void {
    for (const tenant of this.tenants) {
      const have = this.live.filter((s) => s.tenant === tenant).length;
      for (let i = have; i < SESSIONS_PER_TENANT; i++) this.newSession(tenant);
    }
  }

  /** The next event of a session: turn k is a question, its answer and, every third turn, a rating of the answer. */
  private static eventAt(index: number): AgentEvent {
    const perTurn = (t: number) => (t % 3 === 2 ? 3 : 2);
    let turn = 0;
    let first = 0;
    while (first + perTurn(turn) <= index) first += perTurn(turn++);
    const sequence = index + 1;
    const within = index - first;
    if (within === 0) return userMessage(sequence, `the CSV export drops a column (turn ${turn})`);
    if (within === 1) return assistantMessage(sequence, `here is a fix for turn ${turn}`);
    return feedbackEvent(sequence, `e${sequence - 1}`, turn % 2 ? 'positive' : 'negative');
  }

  private async sendEvent(session: Session): Promise<void> {
    const index = session.sent;
    const event = MixedLoad.eventAt(index);
    const last = index === EVENTS_PER_SESSION - 1;
    const res = await this.send(
      'POST',
      '/v3/rest/agent-conversations/ingest',
      { 'X-Service-Agent-Key': session.tenant.agentSecret },
      { agentKey: session.tenant.agentKey, externalSessionId: session.externalId, events: [event], ...(last ? { status: 'ended' } : {}) },
    );
    if (res.status !== 202) return;
    session.id = String(res.body?.sessionId);
    session.sent++;
    this.counts.events++;
    const tenantCounts = this.counts.byTenant[session.tenant.organizationId]!;
    tenantCounts.events++;
    if (event.type === 'assistant_message') {
      session.answers++;
      this.counts.answers++;
      tenantCounts.answers++;
    }
    if (last) {
      session.endedAt = Date.now();
      this.live.splice(this.live.indexOf(session), 1);
      this.ended.push(session);
      this.counts.sessionsEnded++;
    }
  }

  private async createFeedback(tenant: Tenant): Promise<void> {
    const externalId = `ticket-${randomUUID()}`;
    const res = await this.send(
      'POST',
      `/v3/rest/feedback-sources/${tenant.sourceId}/records`,
      { 'X-Service-Api-Key': tenant.apiKey, 'Idempotency-Key': externalId },
      { external_id: externalId, fields: [{ category: 'content', type: 'string', name: 'body', value: 'exports drop a column' }] },
    );
    // A retry after a fault may find the record made by the attempt whose answer was lost: the key
    // was released when that attempt failed after the record's commit (a 5xx), and the 409 names the record.
    const made = res.status === 409 && res.body?.errorCode === 'duplicate_external_id';
    if (res.status !== 201 && !made) return;
    if (made) this.counts.feedbackFoundByExternalId++;
    this.counts.feedbackRecords++;
    this.recordsToDelete.push({ tenant, id: String(res.body?.id) });
  }

  private async createRecording(tenant: Tenant): Promise<void> {
    const externalId = `call-${randomUUID()}`;
    const utterances = Array.from({ length: 6 }, (_, i) => ({
      startSec: i * 5,
      endSec: i * 5 + 4,
      speaker: i % 2,
      text: i % 2 ? 'we will look at the export' : 'the export drops a column',
    }));
    const res = await this.send(
      'POST',
      '/v3/rest/recordings',
      { 'X-Service-Api-Key': tenant.apiKey, 'Idempotency-Key': externalId },
      { record: { externalId }, name: 'Support call', transcript: { utterances } },
    );
    if (res.status !== 201) return;
    this.counts.recordings++;
    this.recordingsToCheck.push({ tenant, id: String(res.body?.id) });
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** Sends `eventsPerSecond` (the tenants' shares by `weights`, equal by default) until `until` (epoch ms) or stop(). */
  async run(o: { eventsPerSecond: number; until: number; weights?: number[] }): Promise<void> {
    const weights = o.weights ?? this.tenants.map(() => 1);
    const total = weights.reduce((a, b) => a + b, 0);
    const owed = this.tenants.map(() => 0);
    let last = performance.now();
    while (!this.stopped && Date.now() < o.until) {
      await sleep(100);
      const now = performance.now();
      const elapsed = (now - last) / 1000;
      last = now;
      this.refill();
      for (const [i, tenant] of this.tenants.entries()) {
        owed[i]! += (o.eventsPerSecond * elapsed * weights[i]!) / total;
        const idle = this.live.filter((s) => s.tenant === tenant && !s.busy);
        while (owed[i]! >= 1 && idle.length > 0) {
          owed[i]! -= 1;
          const session = idle.splice(Math.floor(Math.random() * idle.length), 1)[0]!;
          session.busy = true;
          this.track(this.sendEvent(session).finally(() => (session.busy = false)));
          if (++this.sinceFeedback >= FEEDBACK_EVERY) {
            this.sinceFeedback = 0;
            this.track(this.createFeedback(tenant));
          }
          if (++this.sinceRecording >= RECORDING_EVERY) {
            this.sinceRecording = 0;
            this.track(this.createRecording(tenant));
          }
        }
        // What could not be sent (every session busy) is not owed later: an open loop does not catch up.
        owed[i] = Math.min(owed[i]!, 1);
      }
    }
  }

  /** Sends as fast as `concurrency` requests allow (the capacity phase) for `seconds`. */
  async runClosed(o: { concurrency: number; seconds: number }): Promise<void> {
    const until = Date.now() + o.seconds * 1000;
    this.refill();
    await Promise.all(
      Array.from({ length: o.concurrency }, async (_, lane) => {
        while (Date.now() < until) {
          this.refill();
          const tenant = this.tenants[lane % this.tenants.length]!;
          const session = this.live.find((s) => s.tenant === tenant && !s.busy);
          if (!session) {
            await sleep(5);
            continue;
          }
          session.busy = true;
          await this.sendEvent(session).finally(() => (session.busy = false));
        }
      }),
    );
  }

  /** Waits for every request in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * Checks the ended sessions that are processed (events stored and processed, one usage record per
   * answer, every analysis done; a session not processed yet waits for the next call) and deletes them through the API;
   * reads back the recordings' transcripts and deletes them, and deletes the feedback records. With
   * `all`, waits (up to `timeoutMs`) until every ended session is processed.
   */
  async settle(o: { all?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (o.timeoutMs ?? 0);
    for (;;) {
      const ready = this.ended.filter((s) => s.id !== undefined);
      if (ready.length > 0) {
        const { rows } = await this.pool.query<{ id: string; events: number; processed: number; units: number; unanalysed: number }>(
          `SELECT s.id,
                  (SELECT count(*)::int FROM agent_events e WHERE e.session_id = s.id) AS events,
                  coalesce(s.processed_through_sequence, 0)::int AS processed,
                  (SELECT count(*)::int FROM usage_records u WHERE u.session_id = s.id) AS units,
                  (SELECT count(*)::int FROM agent_analysis_jobs j WHERE j.session_id = s.id AND j.status <> 'done') AS unanalysed
             FROM agent_sessions s WHERE s.id = ANY($1::uuid[])`,
          [ready.map((s) => s.id)],
        );
        const byId = new Map(rows.map((r) => [r.id, r]));
        for (const session of ready) {
          const row = byId.get(session.id!);
          // Processed, and every answer analysed (its credit debited): then it may be deleted.
          const done = row && row.processed >= session.sent && row.unanalysed === 0;
          // Not processed yet: the next call looks again (the end of the run reports it as a mismatch).
          if (!done && !(o.all && Date.now() > deadline)) continue;
          this.ended.splice(this.ended.indexOf(session), 1);
          if (
            !row ||
            row.events !== session.sent ||
            row.processed !== session.sent ||
            row.units !== session.answers ||
            row.unanalysed !== 0
          )
            this.counts.sessionMismatches.push(
              `${session.externalId}: sent ${session.sent} (${session.answers} answers), stored ${JSON.stringify(row ?? null)}`,
            );
          else this.counts.sessionsVerified++;
          const deleted = await this.send('DELETE', `/v3/rest/agent-conversations/sessions/${session.id}`, {
            'X-Service-Api-Key': session.tenant.apiKey,
          });
          if (deleted.status === 204) this.counts.sessionsDeleted++;
        }
      }
      for (const recording of this.recordingsToCheck.splice(0)) {
        const transcript = await this.send('GET', `/v3/rest/recordings/${recording.id}/transcript`, {
          'X-Service-Api-Key': recording.tenant.apiKey,
        });
        if (transcript.status === 200 && JSON.stringify(transcript.body).includes('drops a column')) this.counts.recordingsVerified++;
        await this.send('DELETE', `/v3/rest/recordings/${recording.id}`, { 'X-Service-Api-Key': recording.tenant.apiKey });
      }
      for (const record of this.recordsToDelete.splice(0))
        await this.send('DELETE', `/v3/rest/feedback-sources/${record.tenant.sourceId}/records/${record.id}`, {
          'X-Service-Api-Key': record.tenant.apiKey,
        });
      if (!o.all || this.ended.length === 0) return;
      await sleep(500);
    }
  }

  /** Sessions still live (not ended) and ended ones not yet checked. */
  get pending(): { live: number; unsettled: number } {
    return { live: this.live.length, unsettled: this.ended.length };
  }

  /** Ends every live session that has events (its remaining events sent), so that the run's end leaves none open. */
  async finish(): Promise<void> {
    await this.drain();
    await Promise.all(
      this.live
        .filter((s) => s.sent > 0)
        .map(async (session) => {
          while (session.sent < EVENTS_PER_SESSION) {
            const before = session.sent;
            await this.sendEvent(session);
            if (session.sent === before) return;
          }
        }),
    );
  }
}
