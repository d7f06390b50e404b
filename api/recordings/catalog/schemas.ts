import { FIELD_TYPES } from '../../../src/domain/feedback-fields.js';
import type { JsonSchema } from '../../validation.js';

const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' };
const timestamp = { type: 'string', format: 'date-time' };

export interface CreateFolderBody {
  name: string;
}
export const createFolderBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: nameString },
};
export const folderSchema: JsonSchema = {
  type: 'object',
  required: ['folderId', 'name', 'createdAt'],
  properties: { folderId: { type: 'string', format: 'uuid' }, name: { type: 'string' }, createdAt: timestamp },
};

export interface CreateFieldBody {
  name: string;
  type: (typeof FIELD_TYPES)[number];
}
export const createFieldBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: { name: nameString, type: { type: 'string', enum: [...FIELD_TYPES] } },
};
export const fieldSchema: JsonSchema = {
  type: 'object',
  required: ['fieldId', 'name', 'type', 'source', 'createdAt'],
  properties: {
    fieldId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    type: { enum: [...FIELD_TYPES] },
    source: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' }, externalEntityName: { type: 'string' } } },
    createdAt: timestamp,
  },
};
