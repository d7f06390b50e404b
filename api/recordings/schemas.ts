import type { RecordingRow } from '../../src/db/repositories/recording-reads.js';
import { FIELD_TYPES } from '../../src/domain/feedback-fields.js';
import { recordingListItemSchema } from '../../src/contracts/recordings.js';
import { presentRetry, retrySchema } from '../../src/contracts/retry.js';
import { pageProperties } from '../paging.js';
import { syncPageSchema, syncQueryProperties } from '../sync.js';
import type { JsonSchema, Validated } from '../validation.js';
import { uuid, timestamp } from '../../src/contracts/json-schema.js';

export { createRecordingBody, type CreateRecordingBody } from '../../src/contracts/recordings.js';
export { presentListItem, recordingListItemSchema, type RecordingListItem } from '../../src/contracts/recordings.js';

const nullableString = { type: ['string', 'null'] } as const;
const fieldType = { type: 'string', enum: [...FIELD_TYPES] } as const;

export const recordingSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A recording: its media, transcript, participants, metadata record and folders',
  required: ['id', 'name', 'recordedAt', 'asset', 'transcript', 'participants', 'record', 'folderIds', 'createdAt', 'updatedAt'],
  properties: {
    id: uuid,
    name: { type: 'string' },
    recordedAt: timestamp,
    asset: {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'url', 'errorCode'],
      properties: {
        status: { enum: ['waiting', 'queued', 'uploading', 'processing', 'completed', 'failed', 'cancelled'] },
        url: { type: ['string', 'null'], description: 'A signed, expiring playback URL once the media is completed' },
        errorCode: nullableString,
      },
    },
    // The media's ingestion (URL transfer or encode) being retried; the asset stays queued or processing meanwhile.
    assetRetry: retrySchema,
    transcript: {
      type: 'object',
      additionalProperties: false,
      required: ['status', 'source'],
      properties: {
        status: { type: 'string', enum: ['waiting', 'processing', 'completed', 'failed', 'unavailable'] },
        source: { type: ['string', 'null'], enum: ['api', 'automatic', null] },
      },
    },
    participants: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['speaker', 'person'],
        properties: {
          speaker: { type: 'integer', minimum: 0 },
          person: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'firstName', 'lastName', 'email'],
            properties: { id: uuid, firstName: nullableString, lastName: nullableString, email: { type: 'string' } },
          },
        },
      },
    },
    record: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'externalId', 'source', 'values'],
          properties: {
            id: uuid,
            externalId: { type: 'string' },
            source: {
              type: 'object',
              additionalProperties: false,
              required: ['id', 'type', 'externalEntityName'],
              properties: { id: uuid, type: { type: 'string' }, externalEntityName: { type: 'string' } },
            },
            values: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['fieldId', 'name', 'type', 'value'],
                properties: {
                  fieldId: uuid,
                  name: { type: 'string' },
                  type: fieldType,
                  value: { description: 'A value of the field type' },
                },
              },
            },
          },
        },
        { type: 'null' },
      ],
    },
    folderIds: { type: 'array', items: uuid },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const satisfies JsonSchema;
export type Recording = Validated<typeof recordingSchema>;

/** The playback URL is derived per request (signed, expiring) once a rendition exists. */
export type PlaybackUrl = (recordingId: string, file: string) => string;

export const presentRecording = (r: RecordingRow, playbackUrl: PlaybackUrl | null = null): Recording => {
  const assetRetry = presentRetry(r);
  return {
    id: r.id,
    name: r.name,
    recordedAt: r.recorded_at,
    asset: {
      status: r.asset_status as Recording['asset']['status'],
      url: r.asset_status === 'completed' && r.asset_rendition_file && playbackUrl ? playbackUrl(r.id, r.asset_rendition_file) : null,
      errorCode: r.asset_error_code,
    },
    ...(assetRetry ? { assetRetry } : {}),
    transcript: {
      status: r.transcript_status as Recording['transcript']['status'],
      source: r.transcript_source as Recording['transcript']['source'],
    },
    participants: r.participants,
    record: r.record as Recording['record'],
    folderIds: r.folder_ids,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

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
    ...syncQueryProperties,
    recorded_at_gt: timestamp,
    recorded_at_gte: timestamp,
    recorded_at_lt: timestamp,
    recorded_at_lte: timestamp,
  },
} as const satisfies JsonSchema;

export const listSchema = syncPageSchema('recordings', recordingListItemSchema);

export const transcriptQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { type: { type: 'string', enum: ['utterance', 'monologue'], default: 'utterance' } },
} as const satisfies JsonSchema;

export const transcriptEntrySchema = {
  type: 'object',
  additionalProperties: false,
  description: 'An utterance, or a monologue (consecutive utterances of one speaker joined)',
  required: ['recordingId', 'startSec', 'endSec', 'speaker', 'text'],
  properties: {
    recordingId: uuid,
    startSec: { type: 'number', minimum: 0 },
    endSec: { type: 'number', minimum: 0 },
    speaker: { type: 'integer', minimum: 0 },
    text: { type: 'string' },
  },
} as const satisfies JsonSchema;
export const transcriptSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A transcript as utterances (type=utterance) or monologues (type=monologue)',
  required: ['type', 'recordingId'],
  properties: {
    type: { enum: ['utterance', 'monologue'] },
    recordingId: uuid,
    utterances: { type: 'array', items: transcriptEntrySchema },
    monologues: { type: 'array', items: transcriptEntrySchema },
  },
} as const satisfies JsonSchema;
export type Transcript = Validated<typeof transcriptSchema>;
export type TranscriptEntry = Validated<typeof transcriptEntrySchema>;

export type ListQuery = Validated<typeof listQuery>;
export type TranscriptQuery = Validated<typeof transcriptQuery>;
