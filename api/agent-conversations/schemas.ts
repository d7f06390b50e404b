import { pageProperties } from '../paging.js';
import type { JsonSchema } from '../validation.js';

/** Spec limits of agent ingest. */
export const INGEST_LIMITS = { requestBytes: 2 * 1024 * 1024, eventBytes: 256 * 1024, events: 500, properties: 50 } as const;

const id = (max = 512) => ({ type: 'string', minLength: 1, maxLength: max, pattern: '\\S' });
const text = (max: number) => ({ type: 'string', maxLength: max });
const properties = { type: 'object', maxProperties: INGEST_LIMITS.properties };

const context: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    productArea: text(200),
    surface: text(200),
    routeTemplate: text(2000),
    pathname: text(2000),
    entryPoint: text(200),
    entityType: text(200),
    entityId: text(512),
    environment: { type: 'string', minLength: 1, maxLength: 64 },
    release: text(200),
    properties,
  },
};

const participant: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    externalId: id(),
    displayName: text(500),
    username: text(500),
    email: { type: 'string', format: 'email', maxLength: 320 },
    personId: { type: 'string', format: 'uuid' },
    companyExternalId: id(),
    boundary: { type: 'string', enum: ['external', 'internal'] },
    ownerUserId: { type: 'string', format: 'uuid' },
    properties,
  },
  // Spec: externalId is required when displayName, username or email is sent.
  dependentRequired: { displayName: ['externalId'], username: ['externalId'], email: ['externalId'] },
};

const feedback: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['targetEventExternalId'],
  // A feedback event carries a rating, labels, a comment, or any combination: at least one.
  anyOf: ['rating', 'labels', 'comment'].map((p) => ({ properties: { [p]: true }, required: [p] })),
  properties: {
    targetEventExternalId: id(),
    rating: { type: 'string', enum: ['positive', 'negative'] },
    labels: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 200 } },
    comment: text(20_000),
  },
};

const event: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalEventId', 'sequence', 'revision', 'occurredAt', 'type'],
  properties: {
    externalEventId: id(),
    sequence: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    revision: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    occurredAt: { type: 'string', format: 'date-time' },
    type: { type: 'string', enum: ['user_message', 'assistant_message', 'feedback'] },
    participantExternalId: id(),
    content: { type: 'string' },
    final: { type: 'boolean' },
    model: { type: 'object', additionalProperties: false, properties: { provider: text(200), name: text(200) } },
    usage: {
      type: 'object',
      additionalProperties: false,
      properties: {
        inputTokens: { type: 'integer', minimum: 0 },
        outputTokens: { type: 'integer', minimum: 0 },
        latencyMs: { type: 'integer', minimum: 0 },
      },
    },
    trace: { type: 'object', additionalProperties: false, properties: { traceId: text(200), spanId: text(200) } },
    feedback,
    context,
  },
  // `feedback` only on feedback events, and every feedback event carries one.
  if: { properties: { type: { const: 'feedback' } } },
  then: { properties: { feedback: true }, required: ['feedback'] },
  else: { not: { properties: { feedback: true }, required: ['feedback'] } },
};

export const ingestBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['agentKey', 'externalSessionId', 'events'],
  properties: {
    agentKey: { type: 'string', minLength: 1, maxLength: 128 },
    externalSessionId: id(),
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    agentVersion: text(200),
    source: {
      type: 'object',
      additionalProperties: false,
      required: ['sdk', 'version'],
      properties: { sdk: text(200), version: text(200) },
    },
    context,
    participants: { type: 'array', maxItems: 100, items: participant },
    events: { type: 'array', minItems: 1, maxItems: INGEST_LIMITS.events, items: event },
  },
};

export const ingestResponse: JsonSchema = {
  type: 'object',
  required: ['sessionId', 'acceptedEventCount', 'deduplicatedEventCount', 'revisedEventCount', 'processingStatus'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    acceptedEventCount: { type: 'integer' },
    deduplicatedEventCount: { type: 'integer' },
    revisedEventCount: { type: 'integer' },
    processingStatus: { type: 'string', enum: ['pending', 'billing_blocked', 'capture_disabled'] },
  },
};

export const sessionsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    applicationId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    ...pageProperties,
  },
};

export const sessionQuery: JsonSchema = {
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
};

export const sessionSchema: JsonSchema = {
  type: 'object',
  required: ['sessionId', 'applicationId', 'externalSessionId', 'status', 'processingStatus', 'processedThroughSequence', 'eventCount'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    applicationId: { type: 'string', format: 'uuid' },
    externalSessionId: { type: 'string' },
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    processingStatus: { type: 'string' },
    processedThroughSequence: { type: ['integer', 'null'] },
    highestSequence: { type: ['integer', 'null'] },
    eventCount: { type: 'integer' },
  },
};

export const sessionDetailSchema: JsonSchema = {
  ...sessionSchema,
  required: [...(sessionSchema.required as string[]), 'participants', 'events'],
  properties: {
    ...(sessionSchema.properties as object),
    participants: { type: 'array', items: { type: 'object' } },
    events: {
      type: 'array',
      items: {
        type: 'object',
        required: ['externalEventId', 'sequence', 'revision', 'type', 'occurredAt'],
        properties: {
          externalEventId: { type: 'string' },
          sequence: { type: 'integer' },
          revision: { type: 'integer' },
          type: { type: 'string' },
        },
      },
    },
    nextAfterSequence: { type: ['integer', 'null'] },
  },
};
