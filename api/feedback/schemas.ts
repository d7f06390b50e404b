import { FIELD_CATEGORIES, FIELD_TYPES } from '../../src/domain/feedback-fields.js';
import type { RecordRow, SourceRow } from '../../src/db/repositories/feedback.js';
import type { PersonRow } from '../../src/db/repositories/people.js';
import { pageProperties } from '../paging.js';
import type { JsonSchema, Validated } from '../validation.js';
import { timestamp } from '../../src/contracts/json-schema.js';

const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;

export const createSourceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: { name: nameString, type: { type: 'string', enum: ['api'] } },
} as const satisfies JsonSchema;

export const sourceSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A feedback source: where feedback records come from',
  required: ['id', 'name', 'type', 'created_at'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, type: { type: 'string', enum: ['api'] }, created_at: timestamp },
} as const satisfies JsonSchema;
export type Source = Validated<typeof sourceSchema>;

export const presentSource = (s: SourceRow): Source => ({ id: s.id, name: s.name, type: s.type, created_at: s.created_at });

export const upsertPersonBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 320 },
    first_name: { type: 'string', maxLength: 200 },
    last_name: { type: 'string', maxLength: 200 },
    boundary: { type: 'string', enum: ['external'] },
    company: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'domain'],
      properties: { name: nameString, domain: { type: 'string', format: 'hostname', minLength: 3, maxLength: 253, pattern: '\\.' } },
    },
  },
} as const satisfies JsonSchema;

export const personSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A person of the organization, known by e-mail',
  required: ['id', 'uuid', 'first_name', 'last_name', 'email', 'boundary', 'company_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    uuid: { type: 'string', format: 'uuid' },
    first_name: { type: ['string', 'null'] },
    last_name: { type: ['string', 'null'] },
    email: { type: 'string' },
    boundary: { type: 'string', enum: ['external', 'internal'] },
    company_id: { type: ['integer', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const satisfies JsonSchema;
export type Person = Validated<typeof personSchema>;

export const presentPerson = (p: PersonRow): Person => ({
  id: p.id,
  uuid: p.uuid,
  first_name: p.first_name,
  last_name: p.last_name,
  email: p.email,
  boundary: p.boundary,
  company_id: p.company_id,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const fieldSchema = {
  type: 'object',
  description: 'A typed field of a feedback record',
  additionalProperties: false,
  required: ['category', 'type', 'name', 'value'],
  properties: {
    category: { type: 'string', enum: [...FIELD_CATEGORIES] },
    type: { type: 'string', enum: [...FIELD_TYPES] },
    name: nameString,
    value: { description: "A value matching `type`; at most 10 KB (a string's UTF-8 bytes, any other value's JSON text)." },
  },
} as const satisfies JsonSchema;
export const createRecordBody = {
  type: 'object',
  additionalProperties: false,
  required: ['external_id', 'fields'],
  properties: {
    person_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    display_ts: timestamp,
    external_id: { type: 'string', minLength: 1, maxLength: 512, pattern: '\\S' },
    fields: { type: 'array', minItems: 1, maxItems: 200, items: fieldSchema },
  },
} as const satisfies JsonSchema;

export const recordSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A feedback record: typed fields about one piece of feedback, optionally of a person',
  required: ['id', 'person_id', 'feedback_source_id', 'display_ts', 'external_id', 'fields', 'created_at'],
  properties: {
    id: { type: 'integer' },
    person_id: { type: ['integer', 'null'] },
    feedback_source_id: { type: 'integer' },
    display_ts: timestamp,
    external_id: { type: 'string' },
    fields: { type: 'array', items: fieldSchema },
    created_at: timestamp,
  },
} as const satisfies JsonSchema;
export type FeedbackRecord = Validated<typeof recordSchema>;

export const presentRecord = (r: RecordRow): FeedbackRecord => ({
  id: r.id,
  person_id: r.person_id,
  feedback_source_id: r.feedback_source_id,
  display_ts: r.display_ts,
  external_id: r.external_id,
  fields: r.fields as FeedbackRecord['fields'],
  created_at: r.created_at,
});

export type CreateSourceBody = Validated<typeof createSourceBody>;
export type UpsertPersonBody = Validated<typeof upsertPersonBody>;
export type CreateRecordBody = Validated<typeof createRecordBody>;
export type PeopleQuery = Validated<typeof peopleQuery>;
export type RecordsQuery = Validated<typeof recordsQuery>;

export { pageQuery, type PageQuery } from '../paging.js';
export const recordsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageProperties, external_id: { type: 'string', minLength: 1, maxLength: 512 } },
} as const satisfies JsonSchema;
export const peopleQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageProperties, email: { type: 'string', minLength: 1, maxLength: 320 } },
} as const satisfies JsonSchema;

export const duplicateRecordSchema = {
  type: 'object',
  required: ['message', 'errorCode', 'id'],
  properties: { message: { type: 'string' }, errorCode: { type: 'string', enum: ['duplicate_external_id'] }, id: { type: 'integer' } },
} as const satisfies JsonSchema;
