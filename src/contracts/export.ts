import { AGENT_KEY_PATTERN, settingsProperties } from './agent-applications.js';
import { EXPORT_KINDS, type ExportKind } from '../db/repositories/exports.js';
import { nullableTimestamp as nullableInstant, timestamp as instant, uuid, type JsonSchema } from './json-schema.js';

/*
 * The lines of an organization export (GET /v3/rest/organization/export, `intake org export`), one
 * JSON object per line, by `type`. Ids are the organization's own (an import gives new ones and
 * keeps the references between lines). Instants are ISO 8601 UTC.
 */

const nullableText = { type: ['string', 'null'] } as const;
const line = <const T extends string, const P extends Record<string, unknown>>(type: T, properties: P, description: string) =>
  ({
    type: 'object',
    additionalProperties: false,
    description,
    required: ['type', ...Object.keys(properties)] as ['type', ...(keyof P & string)[]],
    properties: { type: { const: type }, ...properties },
  }) as const;
const nullableString = { type: ['string', 'null'] } as const;
const count = { type: 'integer', minimum: 0 } as const;
const emails = { type: 'array', items: { type: 'string' } } as const;

export const EXPORT_LINE_SCHEMAS = {
  export: line(
    'export',
    { version: { const: 1 }, organizationId: uuid, exportedAt: instant },
    'The first line: the format version, the organization exported and when (a snapshot of that moment).',
  ),
  feedback_source: line(
    'feedback_source',
    { id: { type: 'integer' }, name: { type: 'string' }, sourceType: { enum: ['api'] }, createdAt: instant },
    'A feedback source.',
  ),
  person: line(
    'person',
    {
      id: uuid,
      email: { type: 'string' },
      firstName: nullableText,
      lastName: nullableText,
      boundary: { enum: ['external', 'internal'] },
      company: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['name', 'domain'],
        properties: { name: { type: 'string' }, domain: { type: 'string' } },
      },
      erased: { type: 'boolean' },
      createdAt: instant,
    },
    'A person (an erased one is its tombstone).',
  ),
  feedback_record: line(
    'feedback_record',
    {
      sourceId: { type: 'integer' },
      externalId: { type: 'string' },
      displayTs: instant,
      personId: { type: ['string', 'null'], format: 'uuid' },
      fields: { type: 'array' },
      createdAt: instant,
    },
    'A feedback record of a source (`sourceId`), of a person (`personId`) or of nobody.',
  ),
  recording: line(
    'recording',
    {
      id: uuid,
      name: { type: 'string' },
      source: { type: 'string' },
      recordedAt: instant,
      assetStatus: { enum: ['waiting', 'queued', 'uploading', 'processing', 'completed', 'failed', 'cancelled'] },
      transcriptStatus: { enum: ['waiting', 'processing', 'completed', 'failed', 'unavailable'] },
      transcriptSource: { enum: ['api', 'automatic', null] },
      folders: { type: 'array', items: { type: 'string' } },
      metadata: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['externalId', 'values'],
        properties: {
          externalId: { type: 'string' },
          values: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['field', 'fieldType', 'value'],
              properties: {
                field: { type: 'string' },
                fieldType: { enum: ['boolean', 'date', 'datetime', 'float', 'integer', 'json', 'string'] },
                value: {},
              },
            },
          },
        },
      },
      participants: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['speaker', 'personId'],
          properties: { speaker: { type: 'integer' }, personId: uuid },
        },
      },
      utterances: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['startSec', 'endSec', 'speaker', 'text'],
          properties: { startSec: { type: 'number' }, endSec: { type: 'number' }, speaker: { type: 'integer' }, text: { type: 'string' } },
        },
      },
      createdAt: instant,
    },
    'A recording with its participants, transcript, folders (by name) and metadata record; its media is not exported.',
  ),
  agent_application: line(
    'agent_application',
    {
      id: uuid,
      name: settingsProperties.name,
      agentKey: { type: 'string', pattern: AGENT_KEY_PATTERN },
      status: settingsProperties.status,
      contentCapture: settingsProperties.contentCapture,
      redactedFieldNames: settingsProperties.redactedFieldNames,
      redactedTextPatterns: settingsProperties.redactedTextPatterns,
      retentionDays: settingsProperties.retentionDays,
      allowedEnvironments: settingsProperties.allowedEnvironments,
      access: { enum: ['workspace', 'users'] },
      accessUserEmails: emails,
      deleted: { type: 'boolean' },
      createdAt: instant,
    },
    'An agent application: its settings, never its ingest secrets. `accessUserEmails`: the users of `access: users`, by e-mail. `deleted`: deleted with its conversations kept.',
  ),
  agent_session: line(
    'agent_session',
    {
      id: uuid,
      applicationId: uuid,
      agentKey: { type: 'string' },
      externalSessionId: { type: 'string' },
      status: { enum: ['open', 'ended', 'abandoned'] },
      agentVersion: nullableText,
      source: {},
      context: {},
      restrictedToUserEmails: { type: ['array', 'null'], items: { type: 'string' } },
      createdAt: instant,
      endedAt: nullableInstant,
      participants: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: [
            'participantKey',
            'externalId',
            'displayName',
            'username',
            'email',
            'personId',
            'companyExternalId',
            'boundary',
            'ownerUserEmail',
            'properties',
          ],
          properties: {
            participantKey: { type: 'string' },
            externalId: nullableString,
            displayName: nullableString,
            username: nullableString,
            email: nullableString,
            personId: { type: ['string', 'null'], format: 'uuid' },
            companyExternalId: nullableString,
            boundary: { enum: ['external', 'internal', null] },
            ownerUserEmail: nullableString,
            properties: { type: ['object', 'null'] },
          },
        },
      },
    },
    'An agent session of an application (`applicationId`, and its `agentKey`), with its participants. `restrictedToUserEmails`: null, or the users who may read it.',
  ),
  agent_event: line(
    'agent_event',
    {
      sessionId: uuid,
      externalEventId: { type: 'string' },
      sequence: { type: 'integer' },
      revision: { type: 'integer' },
      eventType: { enum: ['user_message', 'assistant_message', 'feedback'] },
      occurredAt: instant,
      final: { type: ['boolean', 'null'] },
      contentHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      payload: { type: ['object', 'null'] },
    },
    'A stored (sanitized) event of a session, its latest revision; `payload` is null when content capture was off.',
  ),
  agent_signal: line(
    'agent_signal',
    {
      id: uuid,
      sessionId: uuid,
      eventExternalId: { type: 'string' },
      eventRevision: { type: ['integer', 'null'] },
      producer: nullableText,
      source: { enum: ['explicit_feedback', 'qualitative_inference'] },
      kind: nullableText,
      rating: { enum: ['positive', 'negative', null] },
      labels: { type: 'array', items: { type: 'string' } },
      comment: nullableText,
      summary: nullableText,
      createdAt: instant,
    },
    'A signal of a session.',
  ),
  end: line(
    'end',
    {
      counts: {
        type: 'object',
        additionalProperties: false,
        required: [...EXPORT_KINDS],
        properties: Object.fromEntries(EXPORT_KINDS.map((k) => [k, count])) as { [K in ExportKind]: typeof count },
      },
    },
    'The last line: how many lines of each type came before it. An export without it was cut short.',
  ),
} as const satisfies Record<string, JsonSchema>;
