import type { SignalRow } from '../../src/db/repositories/agent-signals.js';
import { pageProperties } from '../paging.js';
import { syncPageSchema, syncQueryProperties } from '../sync.js';
import type { JsonSchema, Validated } from '../validation.js';

export const signalsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    source: { type: 'string', enum: ['explicit_feedback', 'qualitative_inference'] },
    rating: { type: 'string', enum: ['positive', 'negative'] },
    sessionId: { type: 'string', format: 'uuid' },
    applicationId: { type: 'string', format: 'uuid' },
    ...pageProperties,
    ...syncQueryProperties,
  },
} as const satisfies JsonSchema;

const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] } as const;

export const signalSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'What a session workflow found in a conversation: explicit feedback, or an inferred sentiment, issue, request, praise or topic',
  required: [
    'id',
    'sessionId',
    'applicationId',
    'eventExternalId',
    'source',
    'kind',
    'rating',
    'labels',
    'comment',
    'summary',
    'producer',
    'createdAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    sessionId: { type: 'string', format: 'uuid' },
    applicationId: { type: 'string', format: 'uuid' },
    eventExternalId: { type: 'string', description: 'The assistant response the signal is about (the rated one, for explicit feedback)' },
    source: { type: 'string', enum: ['explicit_feedback', 'qualitative_inference'] },
    kind: { type: ['string', 'null'], description: 'feedback (explicit), or sentiment, issue, request, praise, topic (inferred)' },
    rating: { anyOf: [{ type: 'string', enum: ['positive', 'negative'] }, { type: 'null' }] },
    labels: { type: 'array', items: { type: 'string' } },
    comment: nullableString,
    summary: nullableString,
    producer: nullableString,
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const satisfies JsonSchema;

export type Signal = Validated<typeof signalSchema>;

export const presentSignal = (g: SignalRow): Signal => ({
  id: g.id,
  sessionId: g.session_id,
  applicationId: g.application_id,
  eventExternalId: g.event_external_id,
  source: g.source,
  kind: g.kind,
  rating: g.rating,
  labels: g.labels,
  comment: g.comment,
  summary: g.summary,
  producer: g.producer,
  createdAt: g.created_at,
});

export const signalsPage = syncPageSchema('signals', signalSchema);

export const usageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    unit: { type: 'string', enum: ['agent_response_processed'], default: 'agent_response_processed' },
    from: { type: 'string', format: 'date-time', description: 'Inclusive; default: the start of the current UTC month' },
    to: { type: 'string', format: 'date-time', description: 'Exclusive; default: now' },
    applicationId: { type: 'string', format: 'uuid' },
  },
} as const satisfies JsonSchema;

export const usageSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Metered units in [from, to), in total and per UTC day',
  required: ['unit', 'from', 'to', 'applicationId', 'quantity', 'days'],
  properties: {
    unit: { type: 'string' },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    applicationId: nullableString,
    quantity: { type: 'integer' },
    days: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'quantity'],
        properties: { date: { type: 'string', format: 'date' }, quantity: { type: 'integer' } },
      },
    },
  },
} as const satisfies JsonSchema;

export type SignalsQuery = Validated<typeof signalsQuery>;
export type UsageQuery = Validated<typeof usageQuery>;
export type Usage = Validated<typeof usageSchema>;
