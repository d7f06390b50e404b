import { pageProperties, type PageQuery } from '../paging.js';
import type { JsonSchema } from '../validation.js';

const uuid = { type: 'string', format: 'uuid' };
const timestamp = { type: 'string', format: 'date-time' };
const int32 = { type: 'integer', minimum: 0, maximum: 2_147_483_647 };
const personName = { type: 'string', maxLength: 200 };

const person: JsonSchema = {
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
};

const utterance: JsonSchema = {
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
};

/** Spec "Create a recording"; the 413 limits of the transcript are checked before this schema. */
export const createRecordingBody: JsonSchema = {
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
};

export const recordingSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'recordedAt', 'asset', 'transcript', 'participants', 'record', 'createdAt', 'updatedAt'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    recordedAt: timestamp,
    asset: {
      type: 'object',
      required: ['status', 'url', 'errorCode'],
      properties: {
        status: { enum: ['waiting', 'queued', 'uploading', 'processing', 'completed', 'failed', 'cancelled'] },
        url: { type: ['string', 'null'] },
        errorCode: { type: ['string', 'null'] },
      },
    },
    transcript: {
      type: 'object',
      required: ['status', 'source'],
      properties: { status: { type: 'string' }, source: { type: ['string', 'null'] } },
    },
    participants: { type: 'array', items: { type: 'object', required: ['speaker', 'person'] } },
    record: { type: ['object', 'null'] },
    folderIds: { type: 'array', items: uuid },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
};

export const conflictSchema: JsonSchema = {
  type: 'object',
  required: ['message', 'recordingId'],
  properties: {
    message: { const: 'recording-external-id-conflict' },
    errorCode: { type: 'string' },
    recordingId: { type: ['string', 'null'], format: 'uuid' },
  },
};

export interface ListQuery extends PageQuery {
  recorded_at_gt?: string;
  recorded_at_gte?: string;
  recorded_at_lt?: string;
  recorded_at_lte?: string;
}
export const listQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageProperties,
    recorded_at_gt: timestamp,
    recorded_at_gte: timestamp,
    recorded_at_lt: timestamp,
    recorded_at_lte: timestamp,
  },
};

export const listSchema: JsonSchema = {
  type: 'object',
  required: ['recordings', 'page', 'limit', 'has_more'],
  properties: {
    recordings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'display_name', 'source', 'recorded_at', 'created_at', 'updated_at', 'metadata'],
        properties: { id: uuid, display_name: { type: 'string' }, source: { type: 'string' }, metadata: { type: 'array' } },
      },
    },
    page: { type: 'integer' },
    limit: { type: 'integer' },
    has_more: { type: 'boolean' },
  },
};

export interface TranscriptQuery {
  type: 'utterance' | 'monologue';
}
export const transcriptQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { type: { type: 'string', enum: ['utterance', 'monologue'], default: 'utterance' } },
};

const entry = {
  type: 'object',
  required: ['recordingId', 'startSec', 'endSec', 'speaker', 'text'],
  properties: {
    recordingId: uuid,
    startSec: { type: 'number' },
    endSec: { type: 'number' },
    speaker: { type: 'integer' },
    text: { type: 'string' },
  },
};
export const transcriptSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'recordingId'],
  properties: {
    type: { enum: ['utterance', 'monologue'] },
    recordingId: uuid,
    utterances: { type: 'array', items: entry },
    monologues: { type: 'array', items: entry },
  },
};
