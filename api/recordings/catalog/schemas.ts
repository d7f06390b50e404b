import { RECORDINGS_SOURCE, type FieldRow, type FolderRow } from '../../../src/db/repositories/metadata.js';
import { FIELD_TYPES } from '../../../src/domain/feedback-fields.js';
import { pageSchema } from '../../paging.js';
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
  additionalProperties: false,
  description: 'A folder of recordings',
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
  additionalProperties: false,
  description: 'A typed metadata field of the recordings source',
  required: ['fieldId', 'name', 'type', 'source', 'createdAt'],
  properties: {
    fieldId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    type: { enum: [...FIELD_TYPES] },
    source: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'type', 'externalEntityName'],
      properties: { id: { type: 'string', format: 'uuid' }, type: { const: 'api' }, externalEntityName: { const: 'recordings' } },
    },
    createdAt: timestamp,
  },
} as const satisfies JsonSchema;

export type CreateFolderBody = Validated<typeof createFolderBody>;
export type CreateFieldBody = Validated<typeof createFieldBody>;
export type Folder = Validated<typeof folderSchema>;
export type MetadataField = Validated<typeof fieldSchema>;

export const presentFolder = (f: FolderRow): Folder => ({ folderId: f.id, name: f.name, createdAt: f.created_at });

export const presentField = (f: FieldRow): MetadataField => ({
  fieldId: f.id,
  name: f.name,
  type: f.type,
  source: { id: f.source_id, type: RECORDINGS_SOURCE.type, externalEntityName: RECORDINGS_SOURCE.externalEntityName },
  createdAt: f.created_at,
});

export const folderPageSchema = pageSchema('folders', folderSchema);
export const fieldPageSchema = pageSchema('fields', fieldSchema);
