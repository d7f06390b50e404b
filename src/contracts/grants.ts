import type { FromSchema } from 'json-schema-to-ts';
import type { GrantRow } from '../db/repositories/oauth-models.js';
import { CONSOLE_CLIENT_ID, CONSOLE_CLIENT_NAME } from '../oauth/console-client.js';
import type { JsonSchema } from './json-schema.js';

/** An MCP client a user approved (an OAuth grant of the built-in authorization server). */
export const grantSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'An MCP client the user approved, or the console they signed in to: it holds tokens in the user’s name until the grant is revoked or expires',
  required: ['grantId', 'clientId', 'clientName', 'scopes', 'grantedAt', 'expiresAt'],
  properties: {
    grantId: { type: 'string' },
    clientId: { type: 'string' },
    clientName: { type: ['string', 'null'], description: 'The name the client registered with' },
    scopes: { type: 'array', items: { type: 'string' } },
    grantedAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const satisfies JsonSchema;
export type Grant = FromSchema<typeof grantSchema>;

export const grantListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['grants'],
  properties: { grants: { type: 'array', items: grantSchema } },
} as const satisfies JsonSchema;

export const presentGrant = (g: GrantRow): Grant => ({
  grantId: g.grant_id,
  clientId: g.client_id,
  // The console is configured, not registered: it has no stored name.
  clientName: g.client_name ?? (g.client_id === CONSOLE_CLIENT_ID ? CONSOLE_CLIENT_NAME : null),
  scopes: g.scopes,
  grantedAt: g.granted_at,
  expiresAt: g.expires_at,
});
