import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema } from './json-schema.js';

const uuid = { type: 'string', format: 'uuid' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
const int32 = { type: 'integer', minimum: 0, maximum: 2_147_483_647 } as const;
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
