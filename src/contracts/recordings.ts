import type { FromSchema } from 'json-schema-to-ts';
import type { ListItemRow } from '../db/repositories/recording-reads.js';
import { FIELD_TYPES } from '../domain/feedback-fields.js';
import { uuid, timestamp, type JsonSchema } from './json-schema.js';

const int32 = { type: 'integer', minimum: 0, maximum: 2_147_483_647 } as const;
const fieldType = { type: 'string', enum: [...FIELD_TYPES] } as const;
const personName = { type: 'string', maxLength: 200 } as const;

const person = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'personId'],
      properties: { type: { const: 'reference' }, personId: uuid },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'email'],
      properties: {
        type: { const: 'upsert' },
        email: { type: 'string', format: 'email', maxLength: 320 },
        firstName: personName,
        lastName: personName,
      },
    },
  ],
} as const satisfies JsonSchema;

const utterance = {
  type: 'object',
  additionalProperties: false,
  required: ['startSec', 'endSec', 'speaker', 'text'],
  // Ordering, timing, blank text and the 20,000-character limit are checked in src/domain/transcript.ts
  // with one message per utterance.
  properties: {
    startSec: { type: 'number', minimum: 0 },
    endSec: { type: 'number', minimum: 0 },
    speaker: int32,
    text: { type: 'string' },
  },
} as const satisfies JsonSchema;

/** Spec "Create a recording"; the 413 limits of the transcript are checked before this schema. */
export const createRecordingBody = {
  type: 'object',
  additionalProperties: false,
  required: ['record'],
  properties: {
    record: {
      type: 'object',
      additionalProperties: false,
      required: ['externalId'],
      properties: {
        // 1 to 512 after trimming: checked in code, where the trimmed length is known
        externalId: { type: 'string', maxLength: 4096 },
        values: {
          type: 'array',
          maxItems: 500,
          items: { type: 'object', additionalProperties: false, required: ['fieldId', 'value'], properties: { fieldId: uuid, value: {} } },
        },
      },
    },
    name: { type: 'string', minLength: 1, maxLength: 500 },
    recordedAt: timestamp,
    folderIds: { type: 'array', maxItems: 500, items: uuid },
    assetUrl: { type: 'string', maxLength: 4096 },
    participants: {
      type: 'array',
      maxItems: 100,
      items: { type: 'object', additionalProperties: false, required: ['speaker', 'person'], properties: { speaker: int32, person } },
    },
    transcript: {
      type: 'object',
      additionalProperties: false,
      required: ['utterances'],
      properties: { utterances: { type: 'array', minItems: 1, items: utterance } },
    },
  },
} as const satisfies JsonSchema;

/** The create body as validated; services take it as it is. */
export type CreateRecordingBody = FromSchema<typeof createRecordingBody>;
export type PersonAssignment = FromSchema<typeof person>;

/**
 * A recording as the REST API lists it (`GET /v3/rest/recordings`) and as `recording.*` and
 * `meeting_join.ended` webhooks carry it (`data.recording`): small, without the transcript.
 */
export const recordingListItemSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A recording in a list, with the metadata records of every source',
  required: ['id', 'display_name', 'source', 'recorded_at', 'created_at', 'updated_at', 'metadata'],
  properties: {
    id: uuid,
    display_name: { type: 'string' },
    source: { type: 'string', description: 'How the recording was made (api, ...)' },
    recorded_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
    metadata: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['source', 'record'],
        properties: {
          source: {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'external_entity_name'],
            properties: { type: { type: 'string' }, external_entity_name: { type: 'string' } },
          },
          record: {
            type: 'object',
            additionalProperties: false,
            required: ['external_id', 'fields'],
            properties: {
              external_id: { type: 'string' },
              fields: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['field_id', 'name', 'type', 'value'],
                  properties: {
                    field_id: uuid,
                    name: { type: 'string' },
                    type: fieldType,
                    value: { description: 'A value of the field type' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const satisfies JsonSchema;
export type RecordingListItem = FromSchema<typeof recordingListItemSchema>;

export const presentListItem = (r: ListItemRow): RecordingListItem => ({ ...r, metadata: r.metadata as RecordingListItem['metadata'] });
