import type { FromSchema } from 'json-schema-to-ts';
import type { PersonErasureRow } from '../db/repositories/person-erasures.js';
import type { JsonSchema } from './json-schema.js';

/** An erasure of a person: also the audit record of who erased whom and when (without the erased data). */
export const personErasureSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['erasureId', 'personUuid', 'status', 'requestedBy', 'requestedAt', 'finishedAt', 'counts'],
  properties: {
    erasureId: { type: 'string', format: 'uuid' },
    personUuid: { type: 'string', format: 'uuid', description: 'The erased person (a tombstone now)' },
    status: { type: 'string', enum: ['running', 'finished'] },
    requestedBy: { type: 'string', description: '`user:<id>`, `apiKey:<id>` or `cli`' },
    requestedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Rows changed per place so far (feedback records: deleted)',
    },
  },
} as const satisfies JsonSchema;
export type PersonErasure = FromSchema<typeof personErasureSchema>;

export const presentPersonErasure = (e: PersonErasureRow): PersonErasure => ({
  erasureId: e.id,
  personUuid: e.person_uuid,
  status: e.finished_at ? 'finished' : 'running',
  requestedBy: e.requested_by,
  requestedAt: e.requested_at,
  finishedAt: e.finished_at,
  counts: e.counts,
});

/** Which person an erasure preview is for: by e-mail (any case), or by the id or uuid the people API shows. */
export const erasurePreviewQuery = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: {
    email: { type: 'string', minLength: 3, maxLength: 320 },
    personId: { type: 'string', minLength: 1, maxLength: 64, description: 'The id or uuid the people API shows' },
  },
} as const satisfies JsonSchema;
export type ErasurePreviewQuery = FromSchema<typeof erasurePreviewQuery>;

/** What erasing a person would change now: shown before the erasure is confirmed (the console lists it). */
export const erasurePreviewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['person', 'counts'],
  properties: {
    person: {
      type: 'object',
      additionalProperties: false,
      required: ['personId', 'personUuid', 'email', 'firstName', 'lastName'],
      properties: {
        personId: { type: 'integer' },
        personUuid: { type: 'string', format: 'uuid' },
        email: { type: 'string' },
        firstName: { type: ['string', 'null'] },
        lastName: { type: ['string', 'null'] },
      },
    },
    counts: {
      type: 'object',
      additionalProperties: { type: 'integer' },
      description:
        'Per place, the rows the erasure would change now (feedback_records: deleted; participants keep their row without identity; text elsewhere has the address replaced)',
    },
  },
} as const satisfies JsonSchema;
export type ErasurePreview = FromSchema<typeof erasurePreviewSchema>;
