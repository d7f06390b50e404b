import type { AppDeps } from '../context.js';
import type { AuthRequirement } from '../middleware/auth.js';
import { managementRateLimit } from '../middleware/rate-limit.js';
import { pageSchema } from '../paging.js';
import type { RouteRegistry } from '../routes.js';
import { API_KEYS_PATH, apiKeyHandlers } from './handlers.js';
import { apiKeySchema, apiKeyWithSecretSchema, createApiKeyBody, pageQuery } from './schemas.js';

/**
 * The organization's API keys, self-service (issue 32, point 4): admins (admin users, and keys given
 * the `admin` scope) create, list and revoke them. A new key gets only scopes its creator holds.
 */
export function apiKeyRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = apiKeyHandlers(deps);
  const auth: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'admin' };
  const limit = managementRateLimit(deps);
  const common = { tags: ['management'], auth, middleware: limit.middleware };

  registry.add({
    ...common,
    method: 'post',
    path: API_KEYS_PATH,
    operationId: 'createApiKey',
    // A retried create would make a second key (and drop the one the first answer carried).
    idempotent: true,
    summary: 'Create an API key; the key itself is in this answer only',
    body: { schema: createApiKeyBody },
    responses: limit.responses({
      201: {
        description: 'The key with `apiKey` (shown this once: Intake keeps only its hash)',
        schema: apiKeyWithSecretSchema,
        headers: { Location: 'The key' },
      },
    }),
    errors: ['scope_not_held'],
    handler: h.create,
  });
  registry.add({
    ...common,
    method: 'get',
    path: API_KEYS_PATH,
    operationId: 'listApiKeys',
    summary: 'List the API keys (revoked ones too, never the keys themselves), oldest first',
    query: pageQuery,
    responses: limit.responses({ 200: { description: 'A page of keys', schema: pageSchema('apiKeys', apiKeySchema) } }),
    handler: h.list,
  });
  registry.add({
    ...common,
    method: 'get',
    path: `${API_KEYS_PATH}/{apiKeyId}`,
    operationId: 'getApiKey',
    summary: 'Get an API key, with the last time it was used',
    responses: limit.responses({ 200: { description: 'The key', schema: apiKeySchema } }),
    handler: h.get,
  });
  registry.add({
    ...common,
    method: 'delete',
    path: `${API_KEYS_PATH}/{apiKeyId}`,
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key: it stops working at once and stays listed with `revokedAt`; revoking it again is 204',
    responses: limit.responses({ 204: { description: 'Revoked' } }),
    handler: h.revoke,
  });
}
