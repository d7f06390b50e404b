import { INGEST_LIMITS } from '../../contracts/agent-ingest.js';
import type { AgentIngestRequest } from '../agent-ingest.js';
import type { GenAiMessage, GenAiSession } from './genai.js';

/** Where the session's events already are (src/db/repositories/agent-conversations.ts, eventPlacements). */
export interface Placements {
  highestSequence: number | null;
  stored: ReadonlyMap<string, { sequence: number; revision: number }>;
}

/**
 * A session's messages as REST ingest requests (the same path, its checks and its answers). Spec rule 7:
 * a sequence is assigned when an event is first stored and never changes: a message stored before keeps
 * its sequence and revision (a re-sent span deduplicates); new ones follow the session's highest
 * sequence in time order, so a message that arrives after a later one was stored is appended, not
 * inserted. Sessions start at 1; a session's messages go in requests of the spec's 500 events at most.
 */
export function ingestRequests(agentKey: string, session: GenAiSession, placements: Placements): AgentIngestRequest[] {
  let next = (placements.highestSequence ?? 0) + 1;
  const events = session.messages.map((m) => {
    const stored = placements.stored.get(m.externalEventId);
    const sequence = stored?.sequence ?? next++;
    return eventOf(m, sequence, stored?.revision ?? 1);
  });
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
