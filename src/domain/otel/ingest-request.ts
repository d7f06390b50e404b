import { INGEST_LIMITS } from '../../contracts/agent-ingest.js';
import type { AgentIngestRequest } from '../agent-ingest.js';
import type { GenAiMessage, GenAiSession } from './genai.js';

/**
 * A session's messages as REST ingest requests (the same path, its checks and its answers), in time
 * order, in requests of the spec's 500 events at most. Their sequences (1, 2, ...) and revisions (1)
 * give only the order: the writer places them under the session's lock (spec rule 7: a message
 * stored before keeps its sequence and revision, new ones follow the session's highest; see
 * placeIncoming in src/domain/agent-events.ts).
 */
export function ingestRequests(agentKey: string, session: GenAiSession): AgentIngestRequest[] {
  const events = session.messages.map((m, i) => eventOf(m, i + 1, 1));
  const users = [...new Set(session.messages.flatMap((m) => (m.userId ? [m.userId] : [])))];
  const requests: AgentIngestRequest[] = [];
  for (let i = 0; i < events.length; i += INGEST_LIMITS.events) {
    const chunk = events.slice(i, i + INGEST_LIMITS.events);
    const named = new Set(chunk.flatMap((e) => (e.participantExternalId ? [e.participantExternalId] : [])));
    requests.push({
      agentKey,
      externalSessionId: session.externalSessionId,
      ...(session.release ? { agentVersion: session.release } : {}),
      ...(session.source ? { source: session.source } : {}),
      ...(session.environment || session.release
        ? {
            context: {
              ...(session.environment ? { environment: session.environment } : {}),
              ...(session.release ? { release: session.release } : {}),
            },
          }
        : {}),
      participants: users.filter((u) => named.has(u)).map((externalId) => ({ externalId, boundary: 'external' as const })),
      events: chunk,
    });
  }
  return requests;
}

function eventOf(m: GenAiMessage, sequence: number, revision: number): AgentIngestRequest['events'][number] {
  return {
    externalEventId: m.externalEventId,
    sequence,
    revision,
    occurredAt: new Date(Number(m.timeUnixNano / 1_000_000n)).toISOString(),
    type: m.type,
    content: m.content,
    ...(m.type === 'assistant_message' ? { final: m.final === true } : {}),
    ...(m.type === 'user_message' && m.userId ? { participantExternalId: m.userId } : {}),
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(m.model ? { model: m.model } : {}),
    ...(m.usage ? { usage: m.usage } : {}),
    trace: m.trace,
  };
}
