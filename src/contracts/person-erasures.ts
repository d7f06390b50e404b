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
