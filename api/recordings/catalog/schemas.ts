import { FIELD_TYPES } from '../../../src/domain/feedback-fields.js';
import type { JsonSchema, Validated } from '../../validation.js';

const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;

export const createFolderBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: nameString },
} as const satisfies JsonSchema;
export const folderSchema = {
  type: 'object',
  required: ['folderId', 'name', 'createdAt'],
  properties: { folderId: { type: 'string', format: 'uuid' }, name: { type: 'string' }, createdAt: timestamp },
} as const satisfies JsonSchema;

export const createFieldBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: { name: nameString, type: { type: 'string', enum: [...FIELD_TYPES] } },
} as const satisfies JsonSchema;
export const fieldSchema = {
  type: 'object',
  required: ['fieldId', 'name', 'type', 'source', 'createdAt'],
  properties: {
    fieldId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    type: { enum: [...FIELD_TYPES] },
    source: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' }, externalEntityName: { type: 'string' } } },
    createdAt: timestamp,
  },
} as const satisfies JsonSchema;

export type CreateFolderBody = Validated<typeof createFolderBody>;
export type CreateFieldBody = Validated<typeof createFieldBody>;
