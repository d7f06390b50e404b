import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { ConflictError, ValidationError, type ConflictKey, type FieldError } from '../errors.js';
import type { AgentEvent, AgentEventType, AgentIngestRequest, AgentSessionStatus, JsonObject } from './agent-ingest.js';

/** What the service keeps of an event to decide on a later copy of it. */
export interface EventState {
  externalEventId: string;
  sequence: number;
  revision: number;
  type: AgentEventType;
  final: boolean | null;
  contentHash: string;
}

/** An event of the request, sanitized; `index` is its position in the body (for error paths). */
export interface IncomingEvent extends EventState {
  index: number;
  feedbackTarget: string | null;
  participantExternalId: string | null;
  payload: JsonObject;
  occurredAt: string;
}

export interface IngestPlan {
  accepted: IncomingEvent[];
  revised: { event: IncomingEvent; previous: EventState }[];
  deduplicated: IncomingEvent[];
}

interface Conflict extends FieldError {
  errorCode: ConflictKey;
}

/**
 * The content an event is compared by: everything but its identity, position, revision and
 * timestamp (spec rule 7: sequence and timestamp are fixed when the event is first persisted).
 */
export function eventPayload(event: AgentEvent): JsonObject {
  const { externalEventId: _id, sequence: _seq, revision: _rev, occurredAt: _at, type: _type, final: _final, ...payload } = event;
  // `final` means something on assistant messages only, and omitted is the same as false there.
  return (event.type === 'assistant_message' ? { ...payload, final: event.final === true } : payload) as JsonObject;
}

export function contentHash(payload: JsonObject): string {
  return createHash('sha256')
    .update(stringify(payload) ?? '')
    .digest('hex');
}

export function toIncoming(event: AgentEvent, index: number): IncomingEvent {
  const payload = eventPayload(event);
  return {
    index,
    externalEventId: event.externalEventId,
    sequence: event.sequence,
    revision: event.revision,
    type: event.type,
    final: event.type === 'assistant_message' ? event.final === true : null,
    contentHash: contentHash(payload),
    feedbackTarget: event.feedback?.targetEventExternalId ?? null,
    participantExternalId: event.participantExternalId ?? null,
    payload,
    occurredAt: event.occurredAt,
  };
}

/**
 * Spec "Allowed environments": with a list configured, every event must resolve (its own context
 * over the session context) to an allowed `context.environment`.
 */
/**
 * Sequences assigned on write (OTLP ingest, decision 0203), under the session's row lock: an event
 * already stored keeps its sequence and revision (a re-sent one deduplicates); new ones follow the
 * session's highest sequence in the order given, so one that arrives after a later one was stored
 * is appended, not inserted (spec rule 7). Pure.
 */
export function placeIncoming(
  incoming: readonly IncomingEvent[],
  stored: readonly EventState[],
  highestSequence: number | null,
): IncomingEvent[] {
  const byId = new Map(stored.map((s) => [s.externalEventId, s]));
  let next = (highestSequence ?? 0) + 1;
  return incoming.map((e) => {
    const found = byId.get(e.externalEventId);
    return found ? { ...e, sequence: found.sequence, revision: found.revision } : { ...e, sequence: next++ };
  });
}

/** Whether an application that accepts `allowed` environments (none: any) accepts `environment`. */
export function environmentAllowed(environment: string | undefined, allowed: readonly string[]): boolean {
  return allowed.length === 0 || (environment !== undefined && allowed.includes(environment));
}

/**
 * Where a request's environment is wrong, said where the integrator fixes it (issue 51): an event's
 * own `context.environment` at that event; the request's `context.environment` (which the events
 * without one inherit) once, at `body.context.environment`, also when it is missing, not once per
 * event that inherited nothing.
 */
export function environmentErrors(request: AgentIngestRequest, allowed: readonly string[]): FieldError[] {
  if (allowed.length === 0) return [];
  const errors = new Map<string, FieldError>();
  const refuse = (path: string, message: string) => {
    if (!errors.has(path)) errors.set(path, { path, message });
  };
  request.events.forEach((event, i) => {
    const own = event.context?.environment;
    const environment = own ?? request.context?.environment;
    const path = own === undefined ? 'body.context.environment' : `body.events.${i}.context.environment`;
    if (environment === undefined)
      refuse(
        path,
        "is required: this application accepts only configured environments (set it on the request's context, or on each event's)",
      );
    else if (!allowed.includes(environment)) refuse(path, `'${environment}' is not an allowed environment of this application`);
  });
  return [...errors.values()];
}

/**
 * The revision rules of the spec, applied in `sequence` order against what is stored and what this
 * request already placed: retry (same content, any revision) is deduplicated; changed content needs
 * a higher revision; an event keeps its sequence and type; a sequence holds one event; a finalized
 * response cannot go back to partial. A feedback event must target an earlier assistant message.
 * Throws ValidationError (400) or ConflictError (409); a throw stores nothing.
 */
export function planIngest(input: {
  stored: readonly EventState[];
  incoming: readonly IncomingEvent[];
  sessionStatus: AgentSessionStatus | null;
  knownParticipants: ReadonlySet<string> | null;
}): IngestPlan {
  const byId = new Map(input.stored.map((e) => [e.externalEventId, e]));
  const bySequence = new Map(input.stored.map((e) => [e.sequence, e]));
  const plan: IngestPlan = { accepted: [], revised: [], deduplicated: [] };
  const invalid: FieldError[] = [];
  const conflicts: Conflict[] = [];
  const inRequest = new Set(input.incoming.map((e) => e.externalEventId));
  const conflicted = new Set<string>();
  // Events first placed by this request: a later copy in the same request replaces them (still one acceptance).
  const placedNow = new Map<string, number>();
  const ordered = [...input.incoming].sort((a, b) => a.sequence - b.sequence || a.index - b.index);
  for (const event of ordered) {
    const path = `body.events.${event.index}`;
    if (input.knownParticipants && event.participantExternalId !== null && !input.knownParticipants.has(event.participantExternalId)) {
      invalid.push({
        path: `${path}.participantExternalId`,
        message: `names no participant of this session ('${event.participantExternalId}')`,
      });
    }
    const existing = byId.get(event.externalEventId);
    const decision = existing ? decideKnown(event, existing) : decideNew(event, bySequence.get(event.sequence), input.sessionStatus);
    if ('conflict' in decision) {
      conflicts.push({ path, ...decision.conflict });
      conflicted.add(event.externalEventId);
      continue;
    }
    if (event.type === 'feedback' && decision.kind !== 'deduplicated') {
      const targetError = feedbackTargetError(event, byId, inRequest, conflicted);
      if (targetError) invalid.push({ path: `${path}.feedback.targetEventExternalId`, message: targetError });
    }
    const placed = placedNow.get(event.externalEventId);
    if (decision.kind === 'deduplicated') plan.deduplicated.push(event);
    else if (placed !== undefined) plan.accepted[placed] = event;
    else if (decision.kind === 'revised' && existing) plan.revised.push({ event, previous: existing });
    else placedNow.set(event.externalEventId, plan.accepted.push(event) - 1);
    if (decision.kind !== 'deduplicated') {
      byId.set(event.externalEventId, event);
      bySequence.set(event.sequence, event);
    }
  }
  if (invalid.length) throw new ValidationError(invalid);
  if (conflicts.length) throw conflictError(conflicts);
  return plan;
}

type Decision = { kind: 'accepted' | 'revised' | 'deduplicated' } | { conflict: { errorCode: ConflictKey; message: string } };

function decideKnown(event: IncomingEvent, existing: EventState): Decision {
  if (existing.sequence !== event.sequence) {
    return {
      conflict: {
        errorCode: 'event_sequence_changed',
        message: `event '${event.externalEventId}' is stored at sequence ${existing.sequence}; an event cannot move`,
      },
    };
  }
  if (existing.type !== event.type) {
    return {
      conflict: {
        errorCode: 'event_type_changed',
        message: `event '${event.externalEventId}' is stored as ${existing.type}; its type cannot change`,
      },
    };
  }
  if (existing.contentHash === event.contentHash) return { kind: 'deduplicated' };
  if (existing.final === true && event.final !== true) {
    return {
      conflict: {
        errorCode: 'final_event_reverted',
        message: `event '${event.externalEventId}' is finalized; it cannot be re-sent as partial`,
      },
    };
  }
  if (event.revision <= existing.revision) {
    return {
      conflict: {
        errorCode: 'event_changed_without_revision',
        message: `event '${event.externalEventId}' changed; send it with a revision above ${existing.revision}`,
      },
    };
  }
  return { kind: 'revised' };
}

function decideNew(event: IncomingEvent, occupant: EventState | undefined, status: AgentSessionStatus | null): Decision {
  if (occupant) {
    return {
      conflict: { errorCode: 'sequence_occupied', message: `sequence ${event.sequence} already holds event '${occupant.externalEventId}'` },
    };
  }
  // Ended sessions never reopen: they take revisions and feedback, not new messages.
  if (status !== null && status !== 'open' && event.type !== 'feedback') {
    return { conflict: { errorCode: 'session_closed', message: `the session is ${status}; it accepts revisions and feedback only` } };
  }
  return { kind: 'accepted' };
}

function feedbackTargetError(
  event: IncomingEvent,
  byId: ReadonlyMap<string, EventState>,
  inRequest: ReadonlySet<string>,
  conflicted: ReadonlySet<string>,
): string | null {
  const id = event.feedbackTarget ?? '';
  // The target itself is in conflict: that 409 is the answer, not a 400 about the feedback.
  if (conflicted.has(id)) return null;
  const target = byId.get(id);
  // Not placed yet but sent in this request: it comes at a later sequence.
  if (!target && inRequest.has(id)) return `must name an earlier assistant_message; '${id}' comes later in the session`;
  if (!target) return `names no event of this session ('${id}')`;
  if (target.type !== 'assistant_message') return `must name an assistant_message; '${target.externalEventId}' is a ${target.type}`;
  if (target.sequence >= event.sequence)
    return `must name an earlier assistant_message; '${target.externalEventId}' is at sequence ${target.sequence}`;
  return null;
}

function conflictError(conflicts: Conflict[]): ConflictError {
  const first = conflicts[0] as Conflict;
  return new ConflictError(first.errorCode, first.message, { conflicts });
}
