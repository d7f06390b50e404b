import { pageProperties } from '../paging.js';
import type { JsonSchema, Validated } from '../validation.js';

export { createRecordingBody, type CreateRecordingBody } from '../../src/contracts/recordings.js';

const uuid = { type: 'string', format: 'uuid' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
export const recordingSchema = {
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
} as const satisfies JsonSchema;

export const conflictSchema = {
  type: 'object',
  required: ['message', 'recordingId'],
  properties: {
    message: { const: 'recording-external-id-conflict' },
    errorCode: { type: 'string' },
    recordingId: { type: ['string', 'null'], format: 'uuid' },
  },
} as const satisfies JsonSchema;

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageProperties,
    recorded_at_gt: timestamp,
    recorded_at_gte: timestamp,
    recorded_at_lt: timestamp,
    recorded_at_lte: timestamp,
  },
} as const satisfies JsonSchema;

export const listSchema = {
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
} as const satisfies JsonSchema;

export const transcriptQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { type: { type: 'string', enum: ['utterance', 'monologue'], default: 'utterance' } },
} as const satisfies JsonSchema;

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
} as const;
export const transcriptSchema = {
  type: 'object',
  required: ['type', 'recordingId'],
  properties: {
    type: { enum: ['utterance', 'monologue'] },
    recordingId: uuid,
    utterances: { type: 'array', items: entry },
    monologues: { type: 'array', items: entry },
  },
} as const satisfies JsonSchema;

export type ListQuery = Validated<typeof listQuery>;
export type TranscriptQuery = Validated<typeof transcriptQuery>;
