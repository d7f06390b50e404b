import { FIELD_CATEGORIES, FIELD_TYPES, type FieldInput } from '../../src/domain/feedback-fields.js';
import { pageProperties } from '../paging.js';
import type { JsonSchema } from '../validation.js';

const timestamp = { type: 'string', format: 'date-time' };
const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' };

export interface CreateSourceBody {
  name: string;
  type: 'api';
}
export const createSourceBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: { name: nameString, type: { type: 'string', enum: ['api'] } },
};

export const sourceSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'type', 'created_at'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, type: { type: 'string', enum: ['api'] }, created_at: timestamp },
};

export interface UpsertPersonBody {
  email: string;
  first_name?: string;
  last_name?: string;
  boundary?: 'external';
  company?: { name: string; domain: string };
}
export const upsertPersonBody: JsonSchema = {
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
};

export const personSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'uuid', 'email', 'boundary', 'company_id', 'created_at'],
  properties: {
    id: { type: 'integer' },
    uuid: { type: 'string', format: 'uuid' },
    first_name: { type: ['string', 'null'] },
    last_name: { type: ['string', 'null'] },
    email: { type: 'string' },
    boundary: { type: 'string' },
    company_id: { type: ['integer', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

export interface CreateRecordBody {
  person_id?: number;
  display_ts?: string;
  external_id: string;
  fields: FieldInput[];
}
export const fieldSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['category', 'type', 'name', 'value'],
  properties: {
    category: { type: 'string', enum: [...FIELD_CATEGORIES] },
    type: { type: 'string', enum: [...FIELD_TYPES] },
    name: nameString,
    value: { description: "A value matching `type`; at most 10 KB (a string's UTF-8 bytes, any other value's JSON text)." },
  },
};
export const createRecordBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['external_id', 'fields'],
  properties: {
    person_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    display_ts: timestamp,
    external_id: { type: 'string', minLength: 1, maxLength: 512, pattern: '\\S' },
    fields: { type: 'array', minItems: 1, maxItems: 200, items: fieldSchema },
  },
};

export const recordSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'person_id', 'feedback_source_id', 'display_ts', 'external_id', 'created_at'],
  properties: {
    id: { type: 'integer' },
    person_id: { type: ['integer', 'null'] },
    feedback_source_id: { type: 'integer' },
    display_ts: timestamp,
    external_id: { type: 'string' },
    fields: { type: 'array', items: fieldSchema },
    created_at: timestamp,
  },
};

export { pageQuery, type PageQuery } from '../paging.js';
export const recordsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageProperties, external_id: { type: 'string', minLength: 1, maxLength: 512 } },
};
export const peopleQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageProperties, email: { type: 'string', minLength: 1, maxLength: 320 } },
};

export function listOf(key: string, item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: [key, 'page', 'limit', 'has_more'],
    properties: {
      [key]: { type: 'array', items: item },
      page: { type: 'integer' },
      limit: { type: 'integer' },
      has_more: { type: 'boolean' },
    },
  };
}

export const duplicateRecordSchema: JsonSchema = {
  type: 'object',
  required: ['message', 'errorCode', 'id'],
  properties: { message: { type: 'string' }, errorCode: { type: 'string', enum: ['duplicate_external_id'] }, id: { type: 'integer' } },
};
