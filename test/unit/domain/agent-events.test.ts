import { strict as assert } from 'node:assert';
import {
  contentHash,
  environmentErrors,
  eventPayload,
  planIngest,
  toIncoming,
  type EventState,
  type IngestPlan,
} from '../../../src/domain/agent-events.js';
import type {
  AgentEvent,
  AgentEventType,
  AgentFeedback,
  AgentIngestRequest,
  AgentSessionStatus,
} from '../../../src/domain/agent-ingest.js';
import { AppError, ConflictError, ValidationError } from '../../../src/errors.js';

interface EventInput {
  externalEventId: string;
  sequence: number;
  revision?: number;
  type?: AgentEventType;
  content?: string;
  final?: boolean;
  feedback?: AgentFeedback;
  participantExternalId?: string;
  occurredAt?: string;
  context?: AgentEvent['context'];
}

/** An event as the integrator sends it; only what a test names differs from the defaults. */
function ev(input: EventInput): AgentEvent {
  const { revision = 1, type = 'user_message', occurredAt = '2026-03-01T10:00:00Z', content, ...rest } = input;
  const event: AgentEvent = { revision, type, occurredAt, ...rest };
  if (content !== undefined) event.content = content;
  else if (type !== 'feedback') event.content = `text of ${input.externalEventId}`;
  return event;
}

/** What the service keeps of an event once stored. */
function stored(event: AgentEvent): EventState {
  const { externalEventId, sequence, revision, type, final, contentHash: hash } = toIncoming(event, 0);
  return { externalEventId, sequence, revision, type, final, contentHash: hash };
}

function plan(
  storedEvents: readonly AgentEvent[],
  request: readonly AgentEvent[],
  options: { sessionStatus?: AgentSessionStatus | null; knownParticipants?: ReadonlySet<string> | null } = {},
): IngestPlan {
  return planIngest({
    stored: storedEvents.map(stored),
    incoming: request.map((e, i) => toIncoming(e, i)),
    sessionStatus: options.sessionStatus === undefined ? 'open' : options.sessionStatus,
    knownParticipants: options.knownParticipants ?? null,
  });
}

const ids = (events: readonly { externalEventId: string }[]) => events.map((e) => e.externalEventId);

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a throw');
}

/** Asserts a 409 and returns its conflicts. */
function conflictOf(fn: () => unknown, errorCode: string, path: string) {
  const error = thrown(fn);
  assert.ok(error instanceof ConflictError, `expected a ConflictError, got ${error.name} ${error.errorCode}`);
  assert.equal(error.status, 409);
  assert.equal(error.errorCode, errorCode);
  const conflicts = error.details.conflicts as { path: string; errorCode: string; message: string }[];
  assert.equal(conflicts[0]?.path, path);
  assert.equal(conflicts[0]?.errorCode, errorCode);
  return conflicts;
}

/** Asserts a 400 and returns its field errors. */
function invalidOf(fn: () => unknown, path: string) {
  const error = thrown(fn);
  assert.ok(error instanceof ValidationError, `expected a ValidationError, got ${error.name} ${error.errorCode}`);
  assert.equal(error.status, 400);
  assert.equal(error.errorCode, 'validation_failed');
  assert.equal(error.errors[0]?.path, path);
  return error.errors;
}

describe('agent events', () => {
  describe('content', () => {
    it('compares everything but identity, position, revision, timestamp and type', () => {
      const event = ev({
        externalEventId: 'a1',
        sequence: 3,
        revision: 2,
        type: 'assistant_message',
        content: 'hi',
        final: true,
        participantExternalId: 'bot',
      });
      assert.deepEqual(eventPayload(event), { content: 'hi', final: true, participantExternalId: 'bot' });
    });

    it('hashes independent of key order and sensitive to values', () => {
      assert.equal(contentHash({ a: 1, b: { c: 'x', d: [1, 2] } }), contentHash({ b: { d: [1, 2], c: 'x' }, a: 1 }));
      assert.notEqual(contentHash({ a: 1 }), contentHash({ a: 2 }));
      assert.match(contentHash({}), /^[0-9a-f]{64}$/);
    });

    it('maps an event to its incoming state', () => {
      const incoming = toIncoming(
        ev({
          externalEventId: 'f1',
          sequence: 4,
          revision: 3,
          type: 'feedback',
          feedback: { targetEventExternalId: 'a1', rating: 'positive' },
          participantExternalId: 'u',
        }),
        7,
      );
      assert.equal(incoming.index, 7);
      assert.equal(incoming.externalEventId, 'f1');
      assert.equal(incoming.sequence, 4);
      assert.equal(incoming.revision, 3);
      assert.equal(incoming.type, 'feedback');
      assert.equal(incoming.final, null);
      assert.equal(incoming.feedbackTarget, 'a1');
      assert.equal(incoming.participantExternalId, 'u');
      assert.equal(incoming.occurredAt, '2026-03-01T10:00:00Z');
      assert.equal(incoming.contentHash, contentHash(incoming.payload));
    });

    it('gives assistant messages a boolean final and other events null', () => {
      assert.equal(toIncoming(ev({ externalEventId: 'a', sequence: 1, type: 'assistant_message', final: true }), 0).final, true);
      assert.equal(toIncoming(ev({ externalEventId: 'a', sequence: 1, type: 'assistant_message' }), 0).final, false);
      assert.equal(toIncoming(ev({ externalEventId: 'u', sequence: 1, final: true }), 0).final, null);
      const bare = toIncoming(ev({ externalEventId: 'u', sequence: 1 }), 0);
      assert.equal(bare.feedbackTarget, null);
      assert.equal(bare.participantExternalId, null);
    });
  });

  describe('revision table', () => {
    const original = ev({ externalEventId: 'e1', sequence: 1, revision: 2, content: 'hello' });

    it('deduplicates a retry with the same content and the same revision', () => {
      const result = plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 2, content: 'hello' })]);
      assert.deepEqual(ids(result.deduplicated), ['e1']);
      assert.deepEqual(result.accepted, []);
      assert.deepEqual(result.revised, []);
    });

    it('deduplicates the same content with a higher revision', () => {
      const result = plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 5, content: 'hello' })]);
      assert.deepEqual(ids(result.deduplicated), ['e1']);
      assert.deepEqual(result.accepted, []);
      assert.deepEqual(result.revised, []);
    });

    it('deduplicates the same content with a lower revision', () => {
      const result = plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 1, content: 'hello' })]);
      assert.deepEqual(ids(result.deduplicated), ['e1']);
      assert.deepEqual(result.accepted, []);
      assert.deepEqual(result.revised, []);
    });

    it('revises changed content with a higher revision, naming the stored state as previous', () => {
      const result = plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 3, content: 'hello, corrected' })]);
      assert.deepEqual(result.accepted, []);
      assert.deepEqual(result.deduplicated, []);
      assert.equal(result.revised.length, 1);
      assert.equal(result.revised[0]?.event.externalEventId, 'e1');
      assert.equal(result.revised[0]?.event.revision, 3);
      assert.deepEqual(result.revised[0]?.previous, stored(original));
    });

    it('rejects changed content with the same revision (409 event_changed_without_revision)', () => {
      conflictOf(
        () => plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 2, content: 'changed' })]),
        'event_changed_without_revision',
        'body.events.0',
      );
    });

    it('rejects changed content with a lower revision (409 event_changed_without_revision)', () => {
      conflictOf(
        () => plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 1, content: 'changed' })]),
        'event_changed_without_revision',
        'body.events.0',
      );
    });

    it('rejects the same externalEventId at another sequence (409 event_sequence_changed)', () => {
      conflictOf(
        () => plan([original], [ev({ externalEventId: 'e1', sequence: 2, revision: 2, content: 'hello' })]),
        'event_sequence_changed',
        'body.events.0',
      );
    });

    it('rejects a changed type (409 event_type_changed)', () => {
      conflictOf(
        () => plan([original], [ev({ externalEventId: 'e1', sequence: 1, revision: 3, type: 'assistant_message', content: 'hello' })]),
        'event_type_changed',
        'body.events.0',
      );
    });

    it('rejects a finalized assistant message re-sent as partial (409 final_event_reverted)', () => {
      const final = ev({ externalEventId: 'a1', sequence: 2, revision: 1, type: 'assistant_message', content: 'answer', final: true });
      conflictOf(
        () =>
          plan(
            [final],
            [ev({ externalEventId: 'a1', sequence: 2, revision: 2, type: 'assistant_message', content: 'answer', final: false })],
          ),
        'final_event_reverted',
        'body.events.0',
      );
    });

    it('revises a partial assistant message into a final one', () => {
      const partial = ev({ externalEventId: 'a1', sequence: 2, revision: 1, type: 'assistant_message', content: 'ans', final: false });
      const result = plan(
        [partial],
        [ev({ externalEventId: 'a1', sequence: 2, revision: 2, type: 'assistant_message', content: 'answer', final: true })],
      );
      assert.deepEqual(ids(result.revised.map((r) => r.event)), ['a1']);
      assert.equal(result.revised[0]?.previous.final, false);
      assert.equal(result.revised[0]?.event.final, true);
    });

    it('rejects a new event on an occupied sequence (409 sequence_occupied)', () => {
      conflictOf(() => plan([original], [ev({ externalEventId: 'e2', sequence: 1 })]), 'sequence_occupied', 'body.events.0');
    });

    it('accepts a new event on a free sequence', () => {
      const result = plan([original], [ev({ externalEventId: 'e2', sequence: 2 })]);
      assert.deepEqual(ids(result.accepted), ['e2']);
      assert.deepEqual(result.revised, []);
      assert.deepEqual(result.deduplicated, []);
    });

    it('does not compare occurredAt: a retry with another timestamp is deduplicated', () => {
      const result = plan(
        [original],
        [ev({ externalEventId: 'e1', sequence: 1, revision: 2, content: 'hello', occurredAt: '2026-03-02T11:30:00Z' })],
      );
      assert.deepEqual(ids(result.deduplicated), ['e1']);
      assert.deepEqual(result.accepted, []);
      assert.deepEqual(result.revised, []);
    });
  });

  describe('ordering', () => {
    it('applies events in sequence order whatever the array order', () => {
      const result = plan(
        [],
        [
          ev({ externalEventId: 'e3', sequence: 3 }),
          ev({ externalEventId: 'e1', sequence: 1 }),
          ev({ externalEventId: 'e2', sequence: 2 }),
        ],
      );
      assert.deepEqual(ids(result.accepted), ['e1', 'e2', 'e3']);
      assert.deepEqual(
        result.accepted.map((e) => e.index),
        [1, 2, 0],
      );
    });

    it('names the original index in error paths', () => {
      // e2 is applied after e1 (sequence order) but sits at index 0; the conflict is reported at index 2.
      const conflicts = conflictOf(
        () =>
          plan(
            [],
            [
              ev({ externalEventId: 'e2', sequence: 2 }),
              ev({ externalEventId: 'e3', sequence: 3 }),
              ev({ externalEventId: 'other', sequence: 2 }),
            ],
          ),
        'sequence_occupied',
        'body.events.2',
      );
      assert.equal(conflicts.length, 1);
    });

    it('lets feedback earlier in the array target an assistant message at a lower sequence later in the array', () => {
      const result = plan(
        [],
        [
          ev({ externalEventId: 'f1', sequence: 2, type: 'feedback', feedback: { targetEventExternalId: 'a1', rating: 'negative' } }),
          ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message', final: true }),
        ],
      );
      assert.deepEqual(ids(result.accepted), ['a1', 'f1']);
    });
  });

  describe('duplicates inside one request', () => {
    it('accepts one of two identical copies and deduplicates the other', () => {
      const result = plan(
        [],
        [ev({ externalEventId: 'e1', sequence: 1, content: 'x' }), ev({ externalEventId: 'e1', sequence: 1, content: 'x' })],
      );
      assert.deepEqual(ids(result.accepted), ['e1']);
      assert.deepEqual(ids(result.deduplicated), ['e1']);
      assert.equal(result.accepted[0]?.index, 0);
      assert.equal(result.deduplicated[0]?.index, 1);
      assert.deepEqual(result.revised, []);
    });

    it('rejects two different events for one sequence (409)', () => {
      conflictOf(
        () => plan([], [ev({ externalEventId: 'e1', sequence: 1 }), ev({ externalEventId: 'e2', sequence: 1 })]),
        'sequence_occupied',
        'body.events.1',
      );
    });

    it('rejects two contents of one event at one revision (409)', () => {
      conflictOf(
        () =>
          plan([], [ev({ externalEventId: 'e1', sequence: 1, content: 'x' }), ev({ externalEventId: 'e1', sequence: 1, content: 'y' })]),
        'event_changed_without_revision',
        'body.events.1',
      );
    });
  });

  describe('feedback', () => {
    const answer = ev({ externalEventId: 'a1', sequence: 2, type: 'assistant_message', final: true });
    const question = ev({ externalEventId: 'u1', sequence: 1 });
    const feedback = (target: string, sequence = 3) =>
      ev({ externalEventId: 'f1', sequence, type: 'feedback', feedback: { targetEventExternalId: target, rating: 'positive' } });

    it('accepts feedback on an earlier stored assistant message', () => {
      const result = plan([question, answer], [feedback('a1')]);
      assert.deepEqual(ids(result.accepted), ['f1']);
    });

    it('accepts feedback on an earlier assistant message of the same request', () => {
      const result = plan([], [question, answer, feedback('a1')]);
      assert.deepEqual(ids(result.accepted), ['u1', 'a1', 'f1']);
    });

    it('rejects feedback on a missing event (400)', () => {
      invalidOf(() => plan([question, answer], [feedback('nope')]), 'body.events.0.feedback.targetEventExternalId');
    });

    it('rejects feedback on a user message (400)', () => {
      invalidOf(() => plan([question, answer], [feedback('u1')]), 'body.events.0.feedback.targetEventExternalId');
    });

    it('rejects feedback on a later stored assistant message (400)', () => {
      const laterAnswer = ev({ externalEventId: 'a1', sequence: 5, type: 'assistant_message', final: true });
      invalidOf(() => plan([question, laterAnswer], [feedback('a1', 3)]), 'body.events.0.feedback.targetEventExternalId');
    });

    it('rejects feedback on a later assistant message of the same request (400)', () => {
      invalidOf(
        () => plan([], [question, feedback('a1', 2), ev({ externalEventId: 'a1', sequence: 3, type: 'assistant_message', final: true })]),
        'body.events.1.feedback.targetEventExternalId',
      );
    });

    it('does not check the target again when the feedback is deduplicated', () => {
      // Stored before its target became unknown here: a retry is still a plain retry.
      const result = plan([feedback('gone')], [feedback('gone')]);
      assert.deepEqual(ids(result.deduplicated), ['f1']);
    });
  });

  describe('closed sessions', () => {
    const answer = ev({ externalEventId: 'a1', sequence: 2, type: 'assistant_message', final: true, content: 'answer' });
    const question = ev({ externalEventId: 'u1', sequence: 1 });

    for (const status of ['ended', 'abandoned'] as const) {
      it(`rejects a new user message when the session is ${status} (409 session_closed)`, () => {
        conflictOf(
          () => plan([question, answer], [ev({ externalEventId: 'u2', sequence: 3 })], { sessionStatus: status }),
          'session_closed',
          'body.events.0',
        );
      });

      it(`rejects a new assistant message when the session is ${status} (409 session_closed)`, () => {
        conflictOf(
          () =>
            plan([question, answer], [ev({ externalEventId: 'a2', sequence: 3, type: 'assistant_message', final: true })], {
              sessionStatus: status,
            }),
          'session_closed',
          'body.events.0',
        );
      });

      it(`accepts new feedback when the session is ${status}`, () => {
        const result = plan(
          [question, answer],
          [ev({ externalEventId: 'f1', sequence: 3, type: 'feedback', feedback: { targetEventExternalId: 'a1', rating: 'negative' } })],
          { sessionStatus: status },
        );
        assert.deepEqual(ids(result.accepted), ['f1']);
      });

      it(`accepts a revision when the session is ${status}`, () => {
        const result = plan(
          [question, answer],
          [ev({ externalEventId: 'a1', sequence: 2, revision: 2, type: 'assistant_message', final: true, content: 'better answer' })],
          { sessionStatus: status },
        );
        assert.deepEqual(ids(result.revised.map((r) => r.event)), ['a1']);
        assert.deepEqual(result.accepted, []);
      });
    }

    it('accepts new messages in a new session (status null)', () => {
      const result = plan([], [question], { sessionStatus: null });
      assert.deepEqual(ids(result.accepted), ['u1']);
    });
  });

  describe('participants', () => {
    it('rejects an unknown participantExternalId (400)', () => {
      invalidOf(
        () =>
          plan(
            [],
            [
              ev({ externalEventId: 'u1', sequence: 1, participantExternalId: 'alice' }),
              ev({ externalEventId: 'u2', sequence: 2, participantExternalId: 'mallory' }),
            ],
            {
              knownParticipants: new Set(['alice']),
            },
          ),
        'body.events.1.participantExternalId',
      );
    });

    it('accepts a known participantExternalId and events without one', () => {
      const result = plan(
        [],
        [ev({ externalEventId: 'u1', sequence: 1, participantExternalId: 'alice' }), ev({ externalEventId: 'u2', sequence: 2 })],
        {
          knownParticipants: new Set(['alice']),
        },
      );
      assert.deepEqual(ids(result.accepted), ['u1', 'u2']);
    });

    it('skips the check when knownParticipants is null', () => {
      const result = plan([], [ev({ externalEventId: 'u1', sequence: 1, participantExternalId: 'anyone' })], { knownParticipants: null });
      assert.deepEqual(ids(result.accepted), ['u1']);
    });
  });

  it('lets a 400 win over a 409 in the same request', () => {
    const errors = invalidOf(
      () =>
        plan(
          [ev({ externalEventId: 'e1', sequence: 1, content: 'x' })],
          [
            ev({ externalEventId: 'e1', sequence: 1, content: 'changed' }),
            ev({ externalEventId: 'f1', sequence: 2, type: 'feedback', feedback: { targetEventExternalId: 'missing' } as AgentFeedback }),
          ],
        ),
      'body.events.1.feedback.targetEventExternalId',
    );
    assert.equal(errors.length, 1);
  });

  it('reports every conflict, the first one as the error code', () => {
    const conflicts = conflictOf(
      () =>
        plan(
          [ev({ externalEventId: 'e1', sequence: 1, content: 'x' }), ev({ externalEventId: 'e2', sequence: 2 })],
          [ev({ externalEventId: 'e2', sequence: 5 }), ev({ externalEventId: 'e1', sequence: 1, content: 'changed' })],
        ),
      'event_changed_without_revision',
      'body.events.1',
    );
    assert.deepEqual(
      conflicts.map((c) => [c.path, c.errorCode]),
      [
        ['body.events.1', 'event_changed_without_revision'],
        ['body.events.0', 'event_sequence_changed'],
      ],
    );
  });

  describe('environmentErrors', () => {
    const request = (events: AgentEvent[], environment?: string): AgentIngestRequest => ({
      agentKey: 'app',
      externalSessionId: 's1',
      ...(environment === undefined ? {} : { context: { environment } }),
      events,
    });

    it('returns no errors when no allowed list is configured', () => {
      assert.deepEqual(environmentErrors(request([ev({ externalEventId: 'u1', sequence: 1 })]), []), []);
    });

    it('lets the event context override the session context', () => {
      const events = [
        ev({ externalEventId: 'u1', sequence: 1, context: { environment: 'production' } }),
        ev({ externalEventId: 'u2', sequence: 2 }),
        ev({ externalEventId: 'u3', sequence: 3, context: { surface: 'chat' } }),
      ];
      assert.deepEqual(environmentErrors(request(events, 'staging'), ['production', 'staging']), []);
      const errors = environmentErrors(request(events, 'production'), ['staging']);
      // The event's own environment at the event; the request's, which two events inherit, once at the request.
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.events.0.context.environment', 'body.context.environment'],
      );
      const overridden = environmentErrors(
        request([ev({ externalEventId: 'u1', sequence: 1, context: { environment: 'staging' } })], 'production'),
        ['staging'],
      );
      assert.deepEqual(overridden, []);
    });

    it("reports a missing environment once, at the request's context, where it is set", () => {
      const errors = environmentErrors(
        request([
          ev({ externalEventId: 'u1', sequence: 1 }),
          ev({ externalEventId: 'u2', sequence: 2, context: { environment: 'production' } }),
          ev({ externalEventId: 'u3', sequence: 3 }),
        ]),
        ['production'],
      );
      assert.deepEqual(
        errors.map((e) => e.path),
        ['body.context.environment'],
      );
      assert.match(errors[0]?.message ?? '', /required.*request's context/);
    });

    it('reports an environment that is not in the list where it was sent', () => {
      const inherited = environmentErrors(
        request([ev({ externalEventId: 'u1', sequence: 1 }), ev({ externalEventId: 'u2', sequence: 2 })], 'development'),
        ['production'],
      );
      assert.deepEqual(
        inherited.map((e) => [e.path, e.message]),
        [['body.context.environment', "'development' is not an allowed environment of this application"]],
      );
      const own = environmentErrors(request([ev({ externalEventId: 'u1', sequence: 1, context: { environment: 'dev' } })]), ['production']);
      assert.deepEqual(
        own.map((e) => e.path),
        ['body.events.0.context.environment'],
      );
    });
  });

  describe('edge cases found in review', () => {
    it('a target in conflict answers its 409, not a 400 about the feedback that names it', () => {
      const occupant = ev({ externalEventId: 'u1', sequence: 1 });
      const request = [
        ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message', final: true }),
        ev({ externalEventId: 'f1', sequence: 2, type: 'feedback', feedback: { targetEventExternalId: 'a1', rating: 'positive' } }),
      ];
      conflictOf(() => plan([occupant], request), 'sequence_occupied', 'body.events.0');
    });

    it('final omitted and final: false are the same content on an assistant message; final means nothing elsewhere', () => {
      const partial = ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message', final: false });
      const omitted = ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message' });
      assert.deepEqual(ids(plan([partial], [omitted]).deduplicated), ['a1']);
      const user = ev({ externalEventId: 'u1', sequence: 2 });
      assert.deepEqual(ids(plan([user], [{ ...user, final: true }]).deduplicated), ['u1']);
    });

    it('a finalized message re-sent as partial is final_event_reverted at any revision', () => {
      const final = ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message', final: true, revision: 2 });
      for (const revision of [1, 2, 3]) {
        conflictOf(() => plan([final], [{ ...final, final: false, revision }]), 'final_event_reverted', 'body.events.0');
      }
    });

    it('a new event and its revision in one request count once, as accepted, with the latest content', () => {
      const first = ev({ externalEventId: 'a1', sequence: 1, type: 'assistant_message', final: false, content: 'draft' });
      const second = { ...first, revision: 2, final: true, content: 'done' };
      const result = plan([], [first, second]);
      assert.deepEqual(ids(result.accepted), ['a1']);
      assert.equal(result.accepted[0]?.payload.content, 'done');
      assert.deepEqual([result.revised.length, result.deduplicated.length], [0, 0]);
    });
  });
});
