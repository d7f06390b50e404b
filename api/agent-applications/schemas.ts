import type { SettingsPatch } from '../../src/agents/applications.js';
import type { JsonSchema } from '../validation.js';

const timestamp = { type: 'string', format: 'date-time' };
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' };
const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' };
export const AGENT_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
export const ENVIRONMENT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

const access: JsonSchema = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'workspace' } } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'userIds'],
      properties: {
        type: { const: 'users' },
        userIds: { type: 'array', minItems: 1, maxItems: 500, items: { type: 'string', format: 'uuid' } },
      },
    },
  ],
};

/** Every setting of the spec's table; absent properties keep their value. */
const settingsProperties = {
  name: nameString,
  status: { type: 'string', enum: ['active', 'disabled'] },
  contentCapture: { type: 'boolean' },
  redactedFieldNames: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } },
  redactedTextPatterns: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S' } },
  retentionDays: { type: ['integer', 'null'], minimum: 1, maximum: 3650 },
  allowedEnvironments: { type: 'array', maxItems: 50, items: { type: 'string', pattern: ENVIRONMENT_PATTERN } },
  conversationAccess: access,
};

export type CreateApplicationBody = SettingsPatch & { name: string; agentKey: string };
export const createApplicationBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'agentKey'],
  properties: { ...settingsProperties, agentKey: { type: 'string', pattern: AGENT_KEY_PATTERN } },
};

export type UpdateApplicationBody = SettingsPatch;
export const updateApplicationBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: settingsProperties,
};

export const applicationSchema: JsonSchema = {
  type: 'object',
  required: [
    'applicationId',
    'name',
    'agentKey',
    'status',
    'contentCapture',
    'redactedFieldNames',
    'redactedTextPatterns',
    'retentionDays',
    'allowedEnvironments',
    'conversationAccess',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    applicationId: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    agentKey: { type: 'string' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    contentCapture: { type: 'boolean' },
    redactedFieldNames: { type: 'array', items: { type: 'string' } },
    redactedTextPatterns: { type: 'array', items: { type: 'string' } },
    retentionDays: { type: ['integer', 'null'] },
    allowedEnvironments: { type: 'array', items: { type: 'string' } },
    conversationAccess: {
      type: 'object',
      required: ['type'],
      properties: { type: { enum: ['workspace', 'users'] }, userIds: { type: 'array' } },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
};

export const credentialSchema: JsonSchema = {
  type: 'object',
  required: ['credentialId', 'applicationId', 'displayPrefix', 'createdAt', 'revokedAt'],
  properties: {
    credentialId: { type: 'string', format: 'uuid' },
    applicationId: { type: 'string', format: 'uuid' },
    displayPrefix: { type: 'string' },
    createdAt: timestamp,
    lastUsedAt: nullableTimestamp,
    revokedAt: nullableTimestamp,
  },
};

export const newCredentialSchema: JsonSchema = {
  type: 'object',
  required: ['credentialId', 'applicationId', 'secret'],
  properties: {
    ...(credentialSchema.properties as object),
    secret: { type: 'string', description: 'Shown once; send it as X-Service-Agent-Key' },
  },
};

export { pageQuery, type PageQuery } from '../paging.js';
