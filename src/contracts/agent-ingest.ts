import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema } from './json-schema.js';

/** Spec limits of agent ingest. */
export const INGEST_LIMITS = { requestBytes: 2 * 1024 * 1024, eventBytes: 256 * 1024, events: 500, properties: 50 } as const;

const id = (max = 512) => ({ type: 'string', minLength: 1, maxLength: max, pattern: '\\S' }) as const;
const text = (max: number) => ({ type: 'string', maxLength: max }) as const;
const properties = { type: 'object', maxProperties: INGEST_LIMITS.properties } as const;

const context = {
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
} as const satisfies JsonSchema;

const participant = {
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
} as const satisfies JsonSchema;

const feedback = {
  type: 'object',
  additionalProperties: false,
  required: ['targetEventExternalId'],
  // A feedback event carries a rating, labels, a comment, or any combination: at least one.
  anyOf: [
    { properties: { rating: true }, required: ['rating'] },
    { properties: { labels: true }, required: ['labels'] },
    { properties: { comment: true }, required: ['comment'] },
  ],
  properties: {
    targetEventExternalId: id(),
    rating: { type: 'string', enum: ['positive', 'negative'] },
    labels: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 200 } },
    comment: text(20_000),
  },
} as const satisfies JsonSchema;

/**
 * Assistant messages: the tools the model called in this message, by name (and the call's id), never
 * their arguments or results (the spec's rule 8: no tool inputs or outputs). OTLP ingest fills it
 * from GenAI spans; REST callers may send it too.
 */
const toolCalls = {
  type: 'array',
  maxItems: 64,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { id: id(), name: { type: 'string', minLength: 1, maxLength: 200 } },
  },
} as const satisfies JsonSchema;

const event = {
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
    toolCalls,
    feedback,
    context,
  },
  // `feedback` only on feedback events, and every feedback event carries one.
  if: { properties: { type: { const: 'feedback' } } },
  then: { properties: { feedback: true }, required: ['feedback'] },
  else: { not: { properties: { feedback: true }, required: ['feedback'] } },
} as const satisfies JsonSchema;

export const ingestBody = {
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
} as const satisfies JsonSchema;

/**
 * The request as Ajv leaves it after validation. `if/then/else`, `not` and `dependentRequired` are
 * not expressed in the type (FromSchema's defaults): `feedback` is optional on every event here.
 */
export type AgentIngestRequestSchema = FromSchema<typeof ingestBody>;

/**
 * Spec limit: 256 KiB per event, measured as the event's JSON (a 400 for REST ingest; OTLP ingest
 * rejects the session's spans with the reason). The events over it, with their path and size.
 */
export function oversizedEvents(body: { events: readonly unknown[] }): { path: string; message: string }[] {
  return body.events.flatMap((event, i) => {
    const bytes = Buffer.byteLength(JSON.stringify(event));
    return bytes > INGEST_LIMITS.eventBytes
      ? [{ path: `body.events.${i}`, message: `is ${bytes} bytes; an event may have at most ${INGEST_LIMITS.eventBytes}` }]
      : [];
  });
}
