import type { FromSchema } from 'json-schema-to-ts';
import type { ApplicationRow, CredentialRow } from '../db/repositories/agent-applications.js';
import { uuid, timestamp, nullableTimestamp, type JsonSchema } from './json-schema.js';

const nameString = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
export const AGENT_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
export const ENVIRONMENT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

const access = {
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
} as const satisfies JsonSchema;

/** Every setting of the spec's table; absent properties keep their value. */
export const settingsProperties = {
  name: nameString,
  status: { type: 'string', enum: ['active', 'disabled'] },
  contentCapture: { type: 'boolean' },
  redactedFieldNames: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } },
  redactedTextPatterns: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S' } },
  retentionDays: { type: ['integer', 'null'], minimum: 1, maximum: 3650 },
  allowedEnvironments: { type: 'array', maxItems: 50, items: { type: 'string', pattern: ENVIRONMENT_PATTERN } },
  conversationAccess: access,
} as const;

export const createApplicationBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'agentKey'],
  properties: { ...settingsProperties, agentKey: { type: 'string', pattern: AGENT_KEY_PATTERN } },
} as const satisfies JsonSchema;

export const updateApplicationBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: settingsProperties,
} as const satisfies JsonSchema;

export type ConversationAccess = FromSchema<typeof access>;
/** A change of settings, as the REST body and the CLI flags express it; absent fields keep their value. */
export type SettingsPatch = FromSchema<typeof updateApplicationBody>;
export type CreateApplicationBody = FromSchema<typeof createApplicationBody>;

export const applicationSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'An agent application: the agent whose conversations are ingested, with its settings',
  required: [
    'applicationId',
    'organizationId',
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
    applicationId: uuid,
    organizationId: uuid,
    name: { type: 'string' },
    agentKey: { type: 'string' },
    status: { type: 'string', enum: ['active', 'disabled'] },
    contentCapture: { type: 'boolean' },
    redactedFieldNames: { type: 'array', items: { type: 'string' } },
    redactedTextPatterns: { type: 'array', items: { type: 'string' } },
    retentionDays: { type: ['integer', 'null'] },
    allowedEnvironments: { type: 'array', items: { type: 'string' } },
    conversationAccess: access,
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const satisfies JsonSchema;
export type Application = FromSchema<typeof applicationSchema>;

export const presentApplication = (a: ApplicationRow): Application => ({
  applicationId: a.id,
  organizationId: a.organization_id,
  name: a.name,
  agentKey: a.agent_key,
  status: a.status,
  contentCapture: a.content_capture,
  redactedFieldNames: a.redacted_field_names,
  redactedTextPatterns: a.redacted_text_patterns,
  retentionDays: a.retention_days,
  allowedEnvironments: a.allowed_environments,
  conversationAccess: a.access === 'users' ? { type: 'users', userIds: a.access_user_ids } : { type: 'workspace' },
  createdAt: a.created_at,
  updatedAt: a.updated_at,
});

export const credentialSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'An ingest credential of an agent application (never its secret)',
  required: ['credentialId', 'applicationId', 'displayPrefix', 'createdAt', 'lastUsedAt', 'revokedAt'],
  properties: {
    credentialId: uuid,
    applicationId: uuid,
    displayPrefix: { type: 'string' },
    createdAt: timestamp,
    lastUsedAt: nullableTimestamp,
    revokedAt: nullableTimestamp,
  },
} as const satisfies JsonSchema;
export type Credential = FromSchema<typeof credentialSchema>;

export const presentCredential = (c: CredentialRow): Credential => ({
  credentialId: c.id,
  applicationId: c.application_id,
  displayPrefix: c.display_prefix,
  createdAt: c.created_at,
  lastUsedAt: c.last_used_at,
  revokedAt: c.revoked_at,
});

export const newCredentialSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'A new ingest credential with its secret, shown this once',
  required: [...credentialSchema.required, 'secret'],
  properties: {
    ...credentialSchema.properties,
    secret: { type: 'string', description: 'Shown once; send it as X-Service-Agent-Key' },
  },
} as const satisfies JsonSchema;
export type NewCredential = FromSchema<typeof newCredentialSchema>;
