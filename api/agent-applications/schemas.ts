import type { JsonSchema } from '../validation.js';

const timestamp = { type: 'string', format: 'date-time' } as const;
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
export {
  AGENT_KEY_PATTERN,
  ENVIRONMENT_PATTERN,
  createApplicationBody,
  updateApplicationBody,
  type CreateApplicationBody,
  type SettingsPatch as UpdateApplicationBody,
} from '../../src/contracts/agent-applications.js';

export const applicationSchema = {
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
} as const satisfies JsonSchema;

export const credentialSchema = {
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
} as const satisfies JsonSchema;

export const newCredentialSchema = {
  type: 'object',
  required: ['credentialId', 'applicationId', 'secret'],
  properties: {
    ...credentialSchema.properties,
    secret: { type: 'string', description: 'Shown once; send it as X-Service-Agent-Key' },
  },
} as const satisfies JsonSchema;

export { pageQuery, type PageQuery } from '../paging.js';
