import { pageProperties } from '../paging.js';
import type { JsonSchema, Validated } from '../validation.js';

export { INGEST_LIMITS, ingestBody } from '../../src/contracts/agent-ingest.js';

export const ingestResponse = {
  type: 'object',
  required: ['sessionId', 'acceptedEventCount', 'deduplicatedEventCount', 'revisedEventCount', 'processingStatus'],
  properties: {
    sessionId: { type: 'string', format: 'uuid' },
    acceptedEventCount: { type: 'integer' },
    deduplicatedEventCount: { type: 'integer' },
    revisedEventCount: { type: 'integer' },
    processingStatus: { type: 'string', enum: ['pending', 'billing_blocked', 'capture_disabled'] },
  },
} as const satisfies JsonSchema;

export const sessionsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    applicationId: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    ...pageProperties,
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

export const sessionSchema = {
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
} as const satisfies JsonSchema;

export const sessionDetailSchema = {
  ...sessionSchema,
  required: [...sessionSchema.required, 'participants', 'events'],
  properties: {
    ...sessionSchema.properties,
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
} as const satisfies JsonSchema;

export type SessionsQuery = Validated<typeof sessionsQuery>;
export type SessionQuery = Validated<typeof sessionQuery>;
