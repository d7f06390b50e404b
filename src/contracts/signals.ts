import type { FromSchema } from 'json-schema-to-ts';
import type { SignalRow } from '../db/repositories/agent-signals.js';
import type { JsonSchema } from './json-schema.js';

/**
 * A signal as the REST API shows it (`GET /v3/rest/signals`) and as `signal.created` webhooks
 * carry it (`data.signal`): one schema and presenter for both, here because src/ never imports api/.
 */

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

export type Signal = FromSchema<typeof signalSchema>;

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
