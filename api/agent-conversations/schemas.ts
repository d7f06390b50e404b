import type { AnswerTotalsRow, EventRow, sessionParticipants } from '../../src/db/repositories/agent-conversations.js';
import { agentContextSchema, sessionSchema } from '../../src/contracts/agent-sessions.js';
import { createdRangeProperties } from '../created-range.js';
import { pageProperties } from '../paging.js';
import { syncPageSchema, syncQueryProperties } from '../sync.js';
import type { JsonSchema, Validated } from '../validation.js';
import { timestamp } from '../../src/contracts/json-schema.js';

export { INGEST_LIMITS, ingestBody } from '../../src/contracts/agent-ingest.js';
export { agentContextSchema, presentSession, sessionSchema, type Session } from '../../src/contracts/agent-sessions.js';

export const ingestResponse = {
  type: 'object',
  additionalProperties: false,
  description: 'What an ingest stored',
  required: ['sessionId', 'acceptedEventCount', 'deduplicatedEventCount', 'revisedEventCount', 'processingStatus'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    acceptedEventCount: { type: 'integer' },
    deduplicatedEventCount: { type: 'integer' },
    revisedEventCount: { type: 'integer' },
    processingStatus: { type: 'string', enum: ['pending', 'billing_blocked', 'capture_disabled'] },
  },
} as const satisfies JsonSchema;
export type IngestResponse = Validated<typeof ingestResponse>;

export const sessionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    applicationId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    processingStatus: { type: 'string', enum: ['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled'] },
    ...createdRangeProperties('sessions started'),
    ...pageProperties,
    ...syncQueryProperties,
  },
} as const satisfies JsonSchema;

export const sessionQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    afterSequence: {
      type: 'integer',
      minimum: -1,
      maximum: Number.MAX_SAFE_INTEGER,
      default: -1,
      description: 'Events with a higher sequence only (paging)',
    },
    eventLimit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
  },
} as const satisfies JsonSchema;

const nullableString = { type: ['string', 'null'] } as const;

export const sessionsPageSchema = syncPageSchema('sessions', sessionSchema);

type ParticipantRow = Awaited<ReturnType<typeof sessionParticipants>>[number];

export const agentParticipantSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A participant of an agent session, as sent and sanitized',
  required: ['externalId', 'displayName', 'username', 'email', 'personId', 'companyExternalId', 'boundary', 'ownerUserId', 'properties'],
  properties: {
    externalId: nullableString,
    displayName: nullableString,
    username: nullableString,
    email: nullableString,
    personId: { type: ['string', 'null'], format: 'uuid', description: 'The person (people API) the participant was matched to' },
    companyExternalId: nullableString,
    boundary: nullableString,
    ownerUserId: { type: ['string', 'null'], format: 'uuid' },
    properties: { type: ['object', 'null'] },
  },
} as const satisfies JsonSchema;
export type AgentParticipantResponse = Validated<typeof agentParticipantSchema>;

export const presentParticipant = (p: ParticipantRow): AgentParticipantResponse => ({
  externalId: p.external_id,
  displayName: p.display_name,
  username: p.username,
  email: p.email,
  personId: p.person_id,
  companyExternalId: p.company_external_id,
  boundary: p.boundary,
  ownerUserId: p.owner_user_id,
  properties: (p.properties ?? null) as AgentParticipantResponse['properties'],
});

/**
 * A stored event: its identity, then its content as sent and sanitized (absent once retention
 * purged it: `contentStored` false; any content key may be removed by configured field names).
 */
export const agentEventSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A stored (sanitized) event of an agent session',
  required: ['externalEventId', 'sequence', 'revision', 'type', 'occurredAt', 'contentStored', 'previousRevisionCount'],
  properties: {
    externalEventId: { type: 'string' },
    sequence: { type: 'integer', minimum: 0 },
    revision: { type: 'integer', minimum: 1 },
    type: { type: 'string', enum: ['user_message', 'assistant_message', 'feedback'] },
    occurredAt: timestamp,
    participantExternalId: { type: 'string' },
    content: { type: 'string' },
    final: { type: 'boolean', description: 'Assistant messages: whether the response is complete' },
    model: { type: 'object', additionalProperties: false, properties: { provider: { type: 'string' }, name: { type: 'string' } } },
    usage: {
      type: 'object',
      additionalProperties: false,
      properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, latencyMs: { type: 'integer' } },
    },
    trace: { type: 'object', additionalProperties: false, properties: { traceId: { type: 'string' }, spanId: { type: 'string' } } },
    toolCalls: {
      type: 'array',
      description: 'Assistant messages: the tools the model called, by name and call id (never their arguments or results)',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: { id: { type: 'string' }, name: { type: 'string' } },
      },
    },
    feedback: {
      type: 'object',
      additionalProperties: false,
      properties: {
        targetEventExternalId: { type: 'string' },
        rating: { type: 'string', enum: ['positive', 'negative'] },
        labels: { type: 'array', items: { type: 'string' } },
        comment: { type: 'string' },
      },
    },
    context: agentContextSchema,
    contentStored: { type: 'boolean' },
    previousRevisionCount: { type: 'integer', minimum: 0 },
  },
} as const satisfies JsonSchema;
export type AgentEventResponse = Validated<typeof agentEventSchema>;
/** What an event's stored payload holds: the event's content keys. */
type EventPayload = Omit<
  AgentEventResponse,
  'externalEventId' | 'sequence' | 'revision' | 'type' | 'occurredAt' | 'contentStored' | 'previousRevisionCount'
>;

export const presentEvent = (e: EventRow): AgentEventResponse => ({
  externalEventId: e.external_event_id,
  sequence: e.sequence,
  revision: e.revision,
  type: e.type as AgentEventResponse['type'],
  occurredAt: e.occurred_at,
  ...((e.payload ?? {}) as EventPayload),
  ...(e.final === null ? {} : { final: e.final }),
  contentStored: e.payload !== null,
  previousRevisionCount: e.revision_count,
});

/** What a session's answers report, over all its events (not the page). */
export const answerTotalsSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    "The session's answers (assistant messages, a streaming one included) and the `usage` their stored content reports, over all its events: content not stored (content capture off, removed by retention) reports nothing",
  required: ['answers', 'answersWithUsage', 'inputTokens', 'outputTokens', 'medianLatencyMs'],
  properties: {
    answers: { type: 'integer', minimum: 0, description: 'Assistant messages in the session' },
    answersWithUsage: {
      type: 'integer',
      minimum: 0,
      description: 'Those whose stored content reports `usage`: the totals below are theirs',
    },
    inputTokens: { type: 'integer', minimum: 0, description: 'Sum of `usage.inputTokens`' },
    outputTokens: { type: 'integer', minimum: 0, description: 'Sum of `usage.outputTokens`' },
    medianLatencyMs: { type: ['integer', 'null'], minimum: 0, description: 'Median of `usage.latencyMs`; null when no answer reports one' },
  },
} as const satisfies JsonSchema;
export type AnswerTotals = Validated<typeof answerTotalsSchema>;

export const presentAnswerTotals = (t: AnswerTotalsRow): AnswerTotals => ({
  answers: t.answers,
  answersWithUsage: t.answers_with_usage,
  inputTokens: t.input_tokens,
  outputTokens: t.output_tokens,
  medianLatencyMs: t.median_latency_ms,
});

export const sessionDetailSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A session with its participants, the totals of its answers, and a page of its events in sequence order',
  required: [...sessionSchema.required, 'participants', 'answerTotals', 'events', 'nextAfterSequence'],
  properties: {
    ...sessionSchema.properties,
    participants: { type: 'array', items: agentParticipantSchema },
    answerTotals: answerTotalsSchema,
    events: { type: 'array', items: agentEventSchema },
    nextAfterSequence: { type: ['integer', 'null'], description: 'Pass as afterSequence for the next page; null: no more events' },
  },
} as const satisfies JsonSchema;
export type SessionDetail = Validated<typeof sessionDetailSchema>;

export type SessionsQuery = Validated<typeof sessionsQuery>;
export type SessionQuery = Validated<typeof sessionQuery>;
