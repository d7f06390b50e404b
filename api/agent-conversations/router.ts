import type { AppDeps } from '../context.js';
import { ERROR_REF } from '../openapi.js';
import type { RouteRegistry } from '../routes.js';
import { withRateLimit } from '../middleware/rate-limit.js';
import { AGENT_SECRET_ERRORS, agentApplication, agentSecret, type AgentIngestPath } from './auth.js';
import { countRejectedEvents } from './metrics.js';
import { agentConversationHandlers } from './handlers.js';
import { SYNC_LIST_DESCRIPTION } from '../sync.js';
import {
  INGEST_LIMITS,
  ingestBody,
  ingestResponse,
  sessionDetailSchema,
  sessionQuery,
  sessionsPageSchema,
  sessionsQuery,
} from './schemas.js';

/** Agent chat ingestion (agent ingest secrets only) and its read side (organization keys and users). */
export function agentConversationRoutes(deps: AppDeps, registry: RouteRegistry, path: AgentIngestPath): void {
  const { credentials, limits } = path;
  const h = agentConversationHandlers(deps, path);
  registry.add({
    method: 'post',
    path: '/v3/rest/agent-conversations/ingest',
    operationId: 'ingestAgentConversation',
    tags: ['agent-conversations'],
    summary: 'Send a session of ordered events (X-Service-Agent-Key); deduplicated, revised, sanitized, processed in sequence order',
    middleware: [countRejectedEvents(deps.metrics), agentSecret(deps, credentials), ...limits],
    security: [{ agentKey: [] }],
    body: { schema: ingestBody, limitBytes: INGEST_LIMITS.requestBytes, tooLarge: 'ingest_payload_too_large' },
    afterBody: [agentApplication()],
    responses: withRateLimit(
      {
        202: { description: 'Accepted', schema: ingestResponse },
        400: {
          schema: ERROR_REF,
          description: 'Invalid or too large; environment missing or blocked; feedback without an earlier assistant target',
        },
        503: {
          schema: ERROR_REF,
          description:
            'The database is unavailable: nothing was stored; retry. (An ingest that was stored is always answered 202: its processing is handed off durably, also while Temporal is unreachable.)',
        },
      },
      'Over AGENT_INGEST_RATE_LIMIT_PER_MINUTE requests a minute for this organization',
    ),
    errors: [
      ...AGENT_SECRET_ERRORS,
      'event_sequence_changed',
      'event_type_changed',
      'final_event_reverted',
      'event_changed_without_revision',
      'sequence_occupied',
      'session_closed',
    ],
    handler: h.ingest,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/agent-conversations/sessions',
    operationId: 'listAgentSessions',
    tags: ['agent-conversations'],
    summary: 'List agent sessions visible to the caller, newest first (or in change order: incremental sync)',
    description: SYNC_LIST_DESCRIPTION,
    auth: { accept: ['apiKey', 'user'], scope: 'agents:read' },
    query: sessionsQuery,
    responses: {
      200: {
        description: 'A page of sessions',
        schema: sessionsPageSchema,
      },
    },
    errors: ['invalid_cursor'],
    handler: h.listSessions,
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/agent-conversations/sessions/{sessionId}',
    operationId: 'getAgentSession',
    tags: ['agent-conversations'],
    summary: 'A session with its participants and stored (sanitized) events in sequence order',
    auth: { accept: ['apiKey', 'user'], scope: 'agents:read' },
    query: sessionQuery,
    responses: { 200: { description: 'The session', schema: sessionDetailSchema } },
    handler: h.getSession,
  });
  registry.add({
    method: 'delete',
    path: '/v3/rest/agent-conversations/sessions/{sessionId}',
    operationId: 'deleteAgentSession',
    tags: ['agent-conversations'],
    summary:
      'Delete a session with its events, participants, signals and analyses (metered usage stays, without content); deleting it again is 404',
    auth: { accept: ['apiKey', 'user'], scope: 'agents:write' },
    responses: { 204: { description: 'Deleted' } },
    handler: h.deleteSession,
  });
}
