import type { FromSchema } from 'json-schema-to-ts';
import type { JsonSchema } from './json-schema.js';

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
const settingsProperties = {
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
