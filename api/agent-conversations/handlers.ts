import type { AgentIngestRequest } from '../../src/domain/agent-ingest.js';
import { oversizedEvents } from '../../src/contracts/agent-ingest.js';
import {
  findSession,
  listSessions,
  sessionAnswerTotals,
  sessionChanges,
  sessionEvents,
  sessionParticipants,
  type Reader,
} from '../../src/db/repositories/agent-conversations.js';
import { NotFoundError, ValidationError } from '../../src/errors.js';
import { deleteAgentSession } from '../../src/agents/session-deletion.js';
import type { AppContext, AppDeps } from '../context.js';
import { createdRange } from '../created-range.js';
import { principalOf } from '../middleware/auth.js';
import { pageWindow } from '../paging.js';
import { changeBody, changeWindow, offsetBody, syncRequest } from '../sync.js';
import type { RouteInput } from '../routes.js';
import { withCurrentAuthority, type AgentIngestPath } from './auth.js';
import {
  presentAnswerTotals,
  presentEvent,
  presentParticipant,
  presentSession,
  type IngestResponse,
  type SessionDetail,
  type SessionQuery,
  type SessionsQuery,
} from './schemas.js';

export function agentConversationHandlers(deps: AppDeps, { credentials, writer }: AgentIngestPath) {
  const readerOf = (ctx: AppContext): Reader => {
    const p = principalOf(ctx);
    return { organizationId: p.organizationId, userId: p.kind === 'user' ? p.userId : null };
  };

  const ingestWithCurrentAuthority = (ctx: AppContext, body: AgentIngestRequest) =>
    withCurrentAuthority(deps, credentials, ctx, body.agentKey, (authority) => writer.ingest(authority, body));

  return {
    ingest: async (ctx: AppContext, { body }: RouteInput<AgentIngestRequest, unknown>) => {
      const tooLarge = oversizedEvents(body);
      if (tooLarge.length) throw new ValidationError(tooLarge, 'An event exceeds 256 KiB.');
      const result = await ingestWithCurrentAuthority(ctx, body);
      deps.metrics.agentEvents.inc({ outcome: 'accepted' }, result.acceptedEventCount);
      deps.metrics.agentEvents.inc({ outcome: 'deduplicated' }, result.deduplicatedEventCount);
      deps.metrics.agentEvents.inc({ outcome: 'revised' }, result.revisedEventCount);
      // Committed, with the session's wake requested when there is work: the worker's drainer takes it.
      ctx.status = 202;
      const accepted: IngestResponse = {
        sessionId: result.sessionId,
        acceptedEventCount: result.acceptedEventCount,
        deduplicatedEventCount: result.deduplicatedEventCount,
        revisedEventCount: result.revisedEventCount,
        processingStatus: result.processingStatus,
      };
      ctx.body = accepted;
    },

    listSessions: async (ctx: AppContext, { query }: RouteInput<unknown, SessionsQuery>) => {
      const filter = {
        applicationId: query.applicationId,
        status: query.status,
        processingStatus: query.processingStatus,
        ...createdRange(query),
      };
      const sync = syncRequest(ctx, 'agent_sessions', query);
      if (sync) {
        const page = await sessionChanges(deps.pool, readerOf(ctx), filter, changeWindow(sync, query.limit));
        ctx.body = changeBody('sessions', 'agent_sessions', sync, query.limit, page, presentSession);
        return;
      }
      const rows = await listSessions(deps.pool, readerOf(ctx), { ...filter, ...pageWindow(query) });
      ctx.body = offsetBody('sessions', rows, query, presentSession);
    },

    getSession: async (ctx: AppContext, { params, query }: RouteInput<unknown, SessionQuery>) => {
      const session = params.sessionId ? await findSession(deps.pool, readerOf(ctx), params.sessionId) : null;
      if (!session) throw new NotFoundError('Agent session');
      const participants = await sessionParticipants(deps.pool, session.id);
      const totals = await sessionAnswerTotals(deps.pool, session.id);
      const events = await sessionEvents(deps.pool, session.id, { afterSequence: query.afterSequence, limit: query.eventLimit + 1 });
      const page = events.slice(0, query.eventLimit);
      const detail: SessionDetail = {
        ...presentSession(session),
        participants: participants.map(presentParticipant),
        answerTotals: presentAnswerTotals(totals),
        events: page.map(presentEvent),
        nextAfterSequence: events.length > query.eventLimit ? (page.at(-1)?.sequence ?? null) : null,
      };
      ctx.body = detail;
    },

    deleteSession: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      await deleteAgentSession(deps.pool, readerOf(ctx), params.sessionId ?? '');
      ctx.status = 204;
    },
  };
}
