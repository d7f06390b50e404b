import type { FromSchema } from 'json-schema-to-ts';
import type { SessionReadRow } from '../db/repositories/agent-conversations.js';
import { uuid, timestamp, nullableTimestamp, type JsonSchema } from './json-schema.js';

/**
 * An agent session as the REST API lists it (`GET /v3/rest/agent-conversations/sessions`) and as
 * `agent_session.*` webhooks carry it (`data.session`): one schema and presenter for both, here
 * because src/ never imports api/.
 */

const nullableString = { type: ['string', 'null'] } as const;

/** A context as stored: the request's context, sanitized (configured field names may remove any key). */
export const agentContextSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Where the conversation happened, as sent and sanitized; every key may be absent',
  properties: {
    productArea: { type: 'string' },
    surface: { type: 'string' },
    routeTemplate: { type: 'string' },
    pathname: { type: 'string' },
    entryPoint: { type: 'string' },
    entityType: { type: 'string' },
    entityId: { type: 'string' },
    environment: { type: 'string' },
    release: { type: 'string' },
    properties: { type: 'object' },
  },
} as const satisfies JsonSchema;

export const sessionSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'An agent conversation session and the progress of its processing',
  required: [
    'sessionId',
    'applicationId',
    'applicationName',
    'externalSessionId',
    'status',
    'processingStatus',
    'processedThroughSequence',
    'highestSequence',
    'eventCount',
    'agentVersion',
    'source',
    'context',
    'contentPurgedAt',
    'endedAt',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    sessionId: uuid,
    applicationId: uuid,
    applicationName: {
      type: ['string', 'null'],
      description: "The agent application's name, for whoever may read the session (null once the application is deleted)",
    },
    externalSessionId: { type: 'string' },
    status: { type: 'string', enum: ['open', 'ended', 'abandoned'] },
    processingStatus: {
      type: 'string',
      enum: ['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled'],
      description:
        '`pending`: received events wait to be processed (an open session waiting at a missing sequence too). `processing`: every event is processed and the analyses of its responses are running. `completed`: nothing is left to do (an open session moves back to `pending` with its next events). `billing_blocked`: the balance cannot pay an analysis. `capture_disabled`: content capture is off',
    },
    processedThroughSequence: { type: ['integer', 'null'], description: 'Every event up to this sequence is processed' },
    highestSequence: { type: ['integer', 'null'] },
    eventCount: { type: 'integer', minimum: 0 },
    agentVersion: nullableString,
    source: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['sdk', 'version'],
          properties: { sdk: { type: 'string' }, version: { type: 'string' } },
        },
        { type: 'null' },
      ],
    },
    context: { anyOf: [agentContextSchema, { type: 'null' }] },
    contentPurgedAt: { ...nullableTimestamp, description: 'When retention removed the content of its events' },
    endedAt: nullableTimestamp,
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const satisfies JsonSchema;
export type Session = FromSchema<typeof sessionSchema>;

export const presentSession = (s: SessionReadRow): Session => ({
  sessionId: s.id,
  applicationId: s.application_id,
  applicationName: s.application_name,
  externalSessionId: s.external_session_id,
  status: s.status,
  processingStatus: s.reported_processing_status,
  processedThroughSequence: s.processed_through_sequence,
  highestSequence: s.highest_sequence,
  eventCount: s.event_count,
  agentVersion: s.agent_version,
  source: (s.source ?? null) as Session['source'],
  context: s.context ?? null,
  contentPurgedAt: s.content_purged_at,
  endedAt: s.ended_at,
  createdAt: s.created_at,
  updatedAt: s.updated_at,
});
