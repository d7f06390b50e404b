import type { AppDeps } from '../context.js';
import { managementRateLimit } from '../middleware/rate-limit.js';
import type { RouteRegistry } from '../routes.js';
import { managementHandlers } from './handlers.js';
import { pageQuery, pageSchema } from '../paging.js';
import { creditTransactionSchema, organizationSchema, userSchema } from './schemas.js';

/** The "product interface" of the spec as REST: the organization (any credential) and its users (admin). Credits are added by operators (api/operator). */
export function managementRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = managementHandlers(deps);
  const limit = managementRateLimit(deps);
  registry.add({
    method: 'get',
    path: '/v3/rest/organization',
    operationId: 'getOrganization',
    tags: ['management'],
    summary:
      'The organization of the calling credential, with its credit balance and what the credential may do (`caller`: its scopes, a user’s role)',
    auth: { accept: ['apiKey', 'user'] },
    responses: { 200: { description: 'The organization', schema: organizationSchema } },
    handler: h.getOrganization,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/organization/export',
    operationId: 'exportOrganization',
    tags: ['management'],
    summary: "Export the organization's data as NDJSON, streamed (admin)",
    description:
      'One JSON object per line: `export` (version, organization, time), then `feedback_source`, `person`, `feedback_record`, `recording` (with participants, transcript, folders and metadata), `agent_session` (with participants), `agent_event` and `agent_signal` lines, then `end` with the count of each type. One consistent snapshot. A response without its `end` line was cut short (a client that reads nothing for `EXPORT_STALL_TIMEOUT_SECONDS` is cut off). The credential needs `admin` and every read scope (`feedback:read`, `recordings:read`, `agents:read`, `signals:read`): the export holds all of that data. One export of an organization runs at a time (429 `too_many_exports`). Line schemas: docs/guides/data-lifecycle.md; `intake org import` loads a file into an empty organization.',
    auth: { accept: ['apiKey', 'user'], scope: 'admin' },
    middleware: limit.middleware,
    errors: ['too_many_exports'],
    responses: limit.responses({
      200: {
        description: 'The export, one JSON object per line',
        mediaType: 'application/x-ndjson',
        schema: { type: 'string', description: 'NDJSON: one JSON object per line' },
      },
    }),
    handler: h.exportOrganization,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/organization/credit-transactions',
    operationId: 'listCreditTransactions',
    tags: ['management'],
    summary: 'The credit ledger, newest first: top-ups and spends with the balance after each (admin)',
    auth: { accept: ['apiKey', 'user'], scope: 'admin' },
    query: pageQuery,
    responses: { 200: { description: 'A page of the ledger', schema: pageSchema('transactions', creditTransactionSchema) } },
    handler: h.listCreditTransactions,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/users',
    operationId: 'listUsers',
    tags: ['management'],
    summary: 'The users of the organization, oldest first (admin)',
    auth: { accept: ['apiKey', 'user'], scope: 'admin' },
    query: pageQuery,
    responses: { 200: { description: 'A page of users', schema: pageSchema('users', userSchema) } },
    handler: h.listUsers,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/users/{userId}',
    operationId: 'getUser',
    tags: ['management'],
    summary: 'A user of the organization (admin)',
    auth: { accept: ['apiKey', 'user'], scope: 'admin' },
    responses: { 200: { description: 'The user', schema: userSchema } },
    handler: h.getUser,
  });
}
