import type { FromSchema } from 'json-schema-to-ts';
import type { ApiKeyRow } from '../db/repositories/api-keys.js';
import { SCOPES } from '../auth/scopes.js';
import { uuid, timestamp, nullableTimestamp, type JsonSchema } from './json-schema.js';

/** Organization API keys managed over REST (`/v3/rest/api-keys`, admin) and by `intake api-key …`. */

const scopes = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: SCOPES },
} as const;

export const createApiKeyBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'A note for people (what uses the key)' },
    scopes: {
      ...scopes,
      description:
        'What the key may do, each scope at most once, only scopes the caller holds. Omitted: every scope but `admin` and `webhooks:manage` (least privilege: ask for those by name)',
    },
  },
} as const satisfies JsonSchema;
export type CreateApiKeyBody = FromSchema<typeof createApiKeyBody>;

export const apiKeySchema = {
  type: 'object',
  additionalProperties: false,
  description: 'An API key of the organization (never the key itself: only its first characters)',
  required: ['apiKeyId', 'organizationId', 'name', 'displayPrefix', 'scopes', 'createdAt', 'lastUsedAt', 'revokedAt'],
  properties: {
    apiKeyId: uuid,
    organizationId: uuid,
    name: { type: ['string', 'null'] },
    displayPrefix: { type: 'string', description: 'The first characters of the key, to recognise it' },
    scopes: { type: 'array', items: { type: 'string' } },
    createdAt: timestamp,
    lastUsedAt: { ...nullableTimestamp, description: 'The last request made with it, to the minute; null: never used' },
    revokedAt: { ...nullableTimestamp, description: 'When it stopped working; null: it works' },
  },
} as const satisfies JsonSchema;
export type ApiKey = FromSchema<typeof apiKeySchema>;

export const apiKeyWithSecretSchema = {
  ...apiKeySchema,
  description: 'A new API key with the key itself (shown this once: Intake keeps only its hash)',
  required: [...apiKeySchema.required, 'apiKey'],
  properties: {
    ...apiKeySchema.properties,
    apiKey: { type: 'string', description: 'The key (`ik_…`), for the `X-Service-Api-Key` header' },
  },
} as const satisfies JsonSchema;
export type ApiKeyWithSecret = FromSchema<typeof apiKeyWithSecretSchema>;

export const presentApiKey = (k: ApiKeyRow): ApiKey => ({
  apiKeyId: k.id,
  organizationId: k.organization_id,
  name: k.name,
  displayPrefix: k.display_prefix,
  scopes: k.scopes,
  createdAt: k.created_at,
  lastUsedAt: k.last_used_at,
  revokedAt: k.revoked_at,
});
