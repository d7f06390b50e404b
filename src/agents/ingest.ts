import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { environmentErrors, placeIncoming, planIngest, toIncoming, type IncomingEvent } from '../domain/agent-events.js';
import type { AgentIngestRequest, AgentParticipant, AgentSessionStatus } from '../domain/agent-ingest.js';
import { sanitizeIngestRequest } from '../domain/sanitize/index.js';
import type { ApplicationRow, CredentialLookup } from '../db/repositories/agent-applications.js';
import {
  activeUserIds,
  peopleByEmail,
  peopleByUuid,
  upsertParticipants,
  type ParticipantRecord,
} from '../db/repositories/agent-participants.js';
import {
  deleteSessions,
  loadEventStates,
  lockSessions,
  notifySessionWakes,
  participantExternalIds,
  purgeSessionContent,
  reviseEvents,
  sessionKey,
  updateSessionsAfterIngest,
  type LockedSessionRow,
  type SessionUpdate,
} from '../db/repositories/agent-sessions.js';
import { recordEvents } from '../db/repositories/domain-events.js';
import type { Tx } from '../db/pool.js';
import { AppError, ValidationError, type FieldError } from '../errors.js';
import { billingEvents, processingStatusAfterIngest, type ProcessingStatus } from '../domain/agent-session-state.js';
import { currentTraceParent } from '../telemetry/tracing.js';

export type { ProcessingStatus };

export interface IngestResult {
  sessionId: string;
  organizationId: string;
  acceptedEventCount: number;
  deduplicatedEventCount: number;
  revisedEventCount: number;
  processingStatus: ProcessingStatus;
  status: AgentSessionStatus;
  highestSequence: number | null;
}

/** A request sanitized and checked as far as it can be without the database. */
interface Prepared {
  app: ApplicationRow;
  /** The stamp of the lookup the request was prepared from: compared with the database's in the transaction. */
  stamp: string;
  request: AgentIngestRequest;
  participants: ParticipantRecord[];
  incoming: IncomingEvent[];
  /** The request's participant externalIds as sent: its events may reference them even when the key is redacted. */
  sentParticipantIds: string[];
  /** Its session: requests of one session never share a batch. */
  key: string;
  /** Participants or content capture off: statements of its own before its plan is known, so it is written alone. */
  alone: boolean;
  /** The request's trace (tracing on): stored with the wake it requests, continued by whoever takes it. */
  traceParent: string | null;
  /** Its sequences are placed in the transaction (OTLP ingest): those sent are only the order. */
  placeSequences: boolean;
}

/**
 * The application's settings, its status or the credential changed after the lookup the request was
 * prepared from (a cached one): the request stored nothing, and is prepared again from a fresh lookup.
 */
export class StaleAuthorityError extends Error {
  constructor() {
    super('the ingest credential or its application changed since it was looked up');
  }
}

/** Sanitized first: nothing unsanitized is stored or compared. */
async function prepare(authority: CredentialLookup, raw: AgentIngestRequest, placeSequences: boolean): Promise<Prepared> {
  const app = authority.application;
  // Checked on the request as sent: a redacted field name may remove the environment before storage.
  const envErrors = environmentErrors(raw, app.allowed_environments);
  if (envErrors.length) throw new ValidationError(envErrors, 'The environment is missing or not allowed for this application.');
  const request = sanitizeIngestRequest(raw, {
    redactedFieldNames: app.redacted_field_names,
    redactedTextPatterns: app.redacted_text_patterns,
  });
  const participants = participantRecords(request.participants ?? []);
  // A feedback target and participant references are checked as sent too, even when their keys are redacted.
  const incoming = request.events.map((event, i) => ({
    ...toIncoming(event, i),
    feedbackTarget: raw.events[i]?.feedback?.targetEventExternalId ?? null,
  }));
  return {
    app,
    stamp: authority.stamp,
    request,
    participants,
    incoming,
    sentParticipantIds: (raw.participants ?? []).flatMap((p) => (p.externalId === undefined ? [] : [p.externalId])),
    key: sessionKey(app.id, request.externalSessionId),
    alone: participants.length > 0 || !app.content_capture,
    traceParent: currentTraceParent(),
    placeSequences,
  };
}

/** The writer's batching: transactions in flight at once, and ingests one transaction applies at most. */
export interface IngestWriterOptions {
  analysisCreditCost: number;
  maxBatch: number;
  maxInFlight: number;
}

/**
 * Batching of an API process: two transactions in flight (one commits while the next forms), up
 * to 64 requests each (measured in bench/agent-ingest.ts; see
 * docs/decisions/0095-batches-the-drainer-across-sessions-the-api-across-requests.md).
 */
export const INGEST_BATCHING = { maxBatch: 64, maxInFlight: 2 } as const;

/**
 * A writer notifies the workers' drainers of requested wakes at most this often (decision 0210):
 * under load every transaction requests one, and a NOTIFY serializes commits on a cluster-wide
 * lock. An idle drainer is woken by the first; a woken one looks often for longer (HOT_MS).
 */
export const NOTIFY_EVERY_MS = 50;

interface Queued {
  item: Prepared;
  resolve: (r: IngestResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Agent ingest, applied in batches (group commit): the requests that arrive while earlier
 * transactions run are applied together in the next one, each request in its session's row lock,
 * with one statement per table for the whole batch, so that round trips and commits are shared
 * instead of paid per request. A request alone gets a transaction at once. Each request keeps its
 * own answer: one refused (400, 409) is left out and stores nothing; a batch that fails in the
 * database is applied again one request per transaction, so that one request's failure is never
 * another's. Any 400 or 409 rolls that request back whole.
 */
export class AgentIngestWriter {
  private readonly queue: Queued[] = [];
  /** Sessions in transactions now: their next request waits for the next batch. */
  private readonly writing = new Set<string>();
  private inFlight = 0;
  /** When this writer's last notification was sent (0: the next transaction that requests a wake sends one). */
  private notifiedAt = 0;
  /** Transactions written, and the requests they applied (batched ones; a fallback or a request alone counts too). */
  readonly stats = { transactions: 0, requests: 0 };

  constructor(
    private readonly pool: DatabasePool,
    private readonly o: IngestWriterOptions,
  ) {}

  /**
   * Throws StaleAuthorityError when `authority` is out of date: look it up afresh and call again.
   * `placeSequences`: the events' sequences are assigned under the session's lock (placeIncoming),
   * those sent giving only their order (OTLP ingest, which has no sequences of its own).
   */
  async ingest(authority: CredentialLookup, raw: AgentIngestRequest, o: { placeSequences?: boolean } = {}): Promise<IngestResult> {
    const item = await prepare(authority, raw, o.placeSequences ?? false);
    return new Promise((resolve, reject) => {
      // A request alone gets its own transaction at once; the others queue for the next batch.
      if (item.alone) return void this.write([{ item, resolve, reject }]);
      this.queue.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.o.maxInFlight) {
      const batch: Queued[] = [];
      const keys = new Set<string>();
      for (let i = 0; i < this.queue.length && batch.length < this.o.maxBatch; ) {
        const q = this.queue[i]!;
        if (this.writing.has(q.item.key) || keys.has(q.item.key)) {
          i++;
          continue;
        }
        keys.add(q.item.key);
        batch.push(q);
        this.queue.splice(i, 1);
      }
      if (!batch.length) return;
      this.inFlight++;
      for (const k of keys) this.writing.add(k);
      void this.write(batch).finally(() => {
        this.inFlight--;
        for (const k of keys) this.writing.delete(k);
        this.next();
      });
    }
  }

  private count(requests: number): void {
    this.stats.transactions++;
    this.stats.requests += requests;
  }

  private async write(batch: readonly Queued[]): Promise<void> {
    let outcomes: Outcome[];
    let notified = false;
    // Called by a transaction that requests a wake: whether it notifies the drainers.
    const notify = () => {
      if (Date.now() - this.notifiedAt < NOTIFY_EVERY_MS) return false;
      this.notifiedAt = Date.now();
      return (notified = true);
    };
    try {
      outcomes = await this.pool.transaction((tx) =>
        applyIngests(
          tx,
          batch.map((q) => q.item),
          this.o.analysisCreditCost,
          notify,
        ),
      );
      this.count(batch.length);
    } catch (error) {
      // Its notification was not sent: the next transaction sends one.
      if (notified) this.notifiedAt = 0;
      if (batch.length === 1) return batch[0]!.reject(error);
      // One request's failure must not be another's: each alone.
      await Promise.all(batch.map((q) => this.write([q])));
      return;
    }
    outcomes.forEach((outcome, i) => {
      if (outcome instanceof Error) batch[i]!.reject(outcome);
      else batch[i]!.resolve(outcome);
    });
  }
}

type Outcome = IngestResult | AppError | StaleAuthorityError;

/**
 * Applies ingests of distinct sessions in one transaction, each under its session's row lock:
 * one statement per table for all of them. A request refused by its plan (400, 409) gets its
 * error as its outcome and leaves nothing (a session it created is removed again). Requests with
 * participants or content capture off come alone (their statements run before their plan).
 */
async function applyIngests(tx: Tx, items: readonly Prepared[], analysisCreditCost: number, notify: () => boolean): Promise<Outcome[]> {
  const locked = await lockSessions(
    tx,
    items.map(({ app, request }) => ({
      organizationId: app.organization_id,
      applicationId: app.id,
      externalSessionId: request.externalSessionId,
      restrictedTo: app.access === 'users' ? app.access_user_ids : null,
    })),
  );
  const byKey = new Map(locked.map((s) => [sessionKey(s.application_id, s.external_session_id), s]));
  const sessions = items.map((item) => byKey.get(item.key)!);
  // A setting, status or revocation committed before this transaction applies to it (issue 29.3).
  const stale = items.map((item, i) => sessions[i]!.stamp !== item.stamp);
  if (items.length === 1 && stale[0]) throw new StaleAuthorityError();
  if (items.length === 1 && items[0]!.alone) await participantsOf(tx, items[0]!, sessions[0]!);
  const referencing = items.flatMap((item, i) =>
    item.app.content_capture && item.incoming.some((e) => e.participantExternalId !== null) ? [sessions[i]!.id] : [],
  );
  const known = await participantExternalIds(tx, referencing);
  const stored = await loadEventStates(
    tx,
    items.map((item, i) => ({
      sessionId: sessions[i]!.id,
      externalIds: [
        ...item.incoming.map((e) => e.externalEventId),
        ...item.incoming.flatMap((e) => (e.feedbackTarget === null ? [] : [e.feedbackTarget])),
      ],
      // Placed events take sequences no stored event has: only those with their ids are needed.
      sequences: item.placeSequences ? [] : item.incoming.map((e) => e.sequence),
    })),
  );
  const planned = items.map((item, i) => {
    const session = sessions[i]!;
    if (stale[i]) return new StaleAuthorityError();
    try {
      const knownParticipants = known.get(session.id) ?? null;
      for (const id of knownParticipants ? item.sentParticipantIds : []) knownParticipants!.add(id);
      const states = stored.get(session.id)!;
      const incoming = item.placeSequences ? placeIncoming(item.incoming, states, session.highest_sequence) : item.incoming;
      return planIngest({ stored: states, incoming, sessionStatus: session.status, knownParticipants });
    } catch (error) {
      if (items.length === 1 || !(error instanceof AppError)) throw error;
      return error;
    }
  });
  const updates: SessionUpdate[] = [];
  for (const [i, item] of items.entries()) {
    const plan = planned[i]!;
    if (plan instanceof Error) continue;
    const session = sessions[i]!;
    const capture = item.app.content_capture;
    await reviseEvents(
      tx,
      session,
      plan.revised.map((r) => r.event),
      capture,
    );
    const status =
      session.status === 'open' && item.request.status && item.request.status !== 'open' ? item.request.status : session.status;
    updates.push({
      sessionId: session.id,
      organizationId: session.organization_id,
      status,
      captureContent: capture,
      processingStatus: processingStatusAfterIngest({ captureContent: capture, creditBalance: session.credit_balance, analysisCreditCost }),
      agentVersion: capture ? (item.request.agentVersion ?? null) : null,
      source: capture ? (item.request.source ?? null) : null,
      context: capture ? (item.request.context ?? null) : null,
      newEvents: plan.accepted,
      highestSequence: maxSequence(plan.accepted),
      // Work for the drainer: the session's wake is requested (once, however many ingests ask).
      wake: plan.accepted.length > 0 || plan.revised.length > 0 || status !== session.status,
      traceParent: item.traceParent,
    });
  }
  const updated = new Map((await updateSessionsAfterIngest(tx, updates)).map((s) => [s.id, s]));
  // The drainers hear of the wakes at the commit (at the writer's pace).
  if (updates.some((u) => u.wake) && notify()) await notifySessionWakes(tx);
  // Billing blocked or resumed by this ingest (the balance it read under the session's lock), announced with it.
  await recordEvents(
    tx,
    billingEvents(
      sessions.flatMap((s) => {
        const row = updated.get(s.id);
        return row
          ? [
              {
                sessionId: s.id,
                organizationId: s.organization_id,
                applicationId: s.application_id,
                before: s.processing_status,
                after: row.processing_status,
              },
            ]
          : [];
      }),
    ),
  );
  await deleteSessions(
    tx,
    sessions.filter((s, i) => s.created && planned[i] instanceof Error).map((s) => s.id),
  );
  return items.map((item, i): Outcome => {
    const plan = planned[i]!;
    if (plan instanceof Error) return plan;
    const row = updated.get(sessions[i]!.id)!;
    return {
      sessionId: row.id,
      organizationId: item.app.organization_id,
      acceptedEventCount: plan.accepted.length,
      deduplicatedEventCount: plan.deduplicated.length,
      revisedEventCount: plan.revised.length,
      processingStatus: row.processing_status as ProcessingStatus,
      status: row.status,
      highestSequence: row.highest_sequence,
    };
  });
}

/** Content capture off purges the session's content; participants are linked and stored (spec rule 6). */
async function participantsOf(tx: Tx, item: Prepared, session: LockedSessionRow): Promise<void> {
  const capture = item.app.content_capture;
  if (!capture) await purgeSessionContent(tx, session.id);
  const links = await linkParticipants(tx, item.app.organization_id, item.request.participants ?? [], item.participants);
  if (capture) await upsertParticipants(tx, session, links);
}

function maxSequence(events: readonly IncomingEvent[]): number | null {
  return events.length ? Math.max(...events.map((e) => e.sequence)) : null;
}

/** Participants keyed by externalId, or by their content when they have none; a repeated externalId is a 400. */
function participantRecords(participants: readonly AgentParticipant[]): ParticipantRecord[] {
  const seen = new Map<string, number>();
  const errors: FieldError[] = [];
  const records = participants.map((p, i) => {
    const key =
      p.externalId !== undefined
        ? `ext:${p.externalId}`
        : `anon:${createHash('sha256')
            .update(stringify(p) ?? '')
            .digest('hex')}`;
    if (p.externalId !== undefined && seen.has(key))
      errors.push({ path: `body.participants.${i}.externalId`, message: `repeats participant ${seen.get(key)}` });
    seen.set(key, i);
    return {
      participant_key: key,
      external_id: p.externalId ?? null,
      display_name: p.displayName ?? null,
      username: p.username ?? null,
      email: p.email ?? null,
      person_uuid: p.personId?.toLowerCase() ?? null,
      company_external_id: p.companyExternalId ?? null,
      boundary: p.boundary ?? null,
      owner_user_id: p.ownerUserId?.toLowerCase() ?? null,
      properties: p.properties ?? null,
    };
  });
  if (errors.length) throw new ValidationError(errors);
  return records;
}

/**
 * Spec rule 6: an explicit personId must be a person of the organization (400 otherwise) and wins
 * over an e-mail match; a unique case-insensitive e-mail match links the person. People are never
 * created or changed here. An ownerUserId must be an active user of the organization.
 */
async function linkParticipants(
  tx: CommonQueryMethods,
  organizationId: string,
  raw: readonly AgentParticipant[],
  records: ParticipantRecord[],
) {
  const byUuid = await peopleByUuid(
    tx,
    organizationId,
    records.flatMap((r) => (r.person_uuid ? [r.person_uuid] : [])),
  );
  const byEmail = await peopleByEmail(
    tx,
    organizationId,
    raw.flatMap((p) => (p.email && !p.personId ? [p.email] : [])),
  );
  const owners = await activeUserIds(
    tx,
    organizationId,
    records.flatMap((r) => (r.owner_user_id ? [r.owner_user_id] : [])),
  );
  const errors: FieldError[] = [];
  const linked = records.map((r, i) => {
    if (r.person_uuid && !byUuid.has(r.person_uuid))
      errors.push({ path: `body.participants.${i}.personId`, message: 'is not a person of this organization' });
    if (r.owner_user_id && !owners.has(r.owner_user_id))
      errors.push({ path: `body.participants.${i}.ownerUserId`, message: 'is not an active user of this organization' });
    const email = raw[i]?.email?.toLowerCase();
    const personId = r.person_uuid ? (byUuid.get(r.person_uuid) ?? null) : email ? (byEmail.get(email) ?? null) : null;
    return { ...r, person_id: personId };
  });
  if (errors.length) throw new ValidationError(errors);
  return linked;
}
