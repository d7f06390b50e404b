import type { AppDeps } from '../context.js';
import type { RouteRegistry } from '../routes.js';
import { SYNC_LIST_DESCRIPTION } from '../sync.js';
import { signalHandlers } from './handlers.js';
import { signalsPage, signalsQuery, usageQuery, usageSchema } from './schemas.js';

/** What the session workflows produce: signals (conversation access applies) and metered usage. */
export function signalRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const h = signalHandlers(deps);
  registry.add({
    method: 'get',
    path: '/v3/rest/signals',
    operationId: 'listSignals',
    tags: ['signals'],
    summary: 'Signals of the agent conversations visible to the caller, newest first (or in change order: incremental sync)',
    description: SYNC_LIST_DESCRIPTION,
    auth: { accept: ['apiKey', 'user'], scope: 'signals:read' },
    query: signalsQuery,
    responses: {
      200: { description: 'A page of signals', schema: signalsPage },
    },
    errors: ['invalid_cursor'],
    handler: h.listSignals,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/usage',
    operationId: 'getUsage',
    tags: ['signals'],
    summary: 'Metered units of the organization (agent_response_processed), in total and per UTC day',
    auth: { accept: ['apiKey', 'user'], scope: 'agents:read' },
    query: usageQuery,
    responses: {
      200: { description: 'Usage in [from, to)', schema: usageSchema },
    },
    // `sessionId` names a session the caller cannot read, or none.
    errors: ['not_found'],
    handler: h.usage,
  });
}
