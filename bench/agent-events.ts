import type pg from 'pg';
import type { AgentEvent } from '../src/domain/agent-ingest.js';

/** The agent-ingest benchmark's events: alternating user messages and finalized assistant responses. */
export const TEXT =
  'The export to CSV drops the last column when the report has more than twenty columns; ' +
  'here is what I tried: reloading, another browser, and exporting a smaller range. ';

export function event(sequence: number): AgentEvent {
  const assistant = sequence % 2 === 1;
  return {
    externalEventId: `e${sequence}`,
    sequence,
    revision: 1,
    occurredAt: new Date(Date.UTC(2026, 10, 1, 10, 0, sequence)).toISOString(),
    type: assistant ? 'assistant_message' : 'user_message',
    content: `${TEXT}(${sequence})`,
    ...(assistant
      ? { final: true, model: { provider: 'openai', name: 'gpt-4.1' }, usage: { inputTokens: 120, outputTokens: 80, latencyMs: 900 } }
      : {}),
  };
}

/** One phase of the load: what the client process sends. */
export interface IngestLoad {
  url: string;
  /** The applications sending: session s uses credentials[s mod length]. */
  credentials: { secret: string; agentKey: string }[];
  prefix: string;
  requests: number;
  concurrency: number;
  /** `single`: one event per request over `sessions` sessions; `batch`: `events` events per request, each a new session. */
  kind: 'single' | 'batch';
  sessions: number;
  events: number;
  /** Open loop: requests are sent at this rate (per second), `concurrency` the most in flight. */
  rate?: number;
}

/** The raw `pg` limit's session: a row of `agent_sessions` made straight through `pg`. */
/** A session the raw limit writes events into (its organization goes on every event row, as the API writes it). */
export interface RawSession {
  id: string;
  organizationId: string;
}

export async function insertRawSession(
  db: pg.Pool,
  organizationId: string,
  applicationId: string,
  externalSessionId: string,
): Promise<RawSession> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO agent_sessions (organization_id, application_id, external_session_id) VALUES ($1, $2, $3) RETURNING id',
    [organizationId, applicationId, externalSessionId],
  );
  return { id: rows[0]!.id, organizationId };
}

/** The raw `pg` limit's write: the same event rows the API stores (agent_events' shape), in one statement. */
export async function insertRawEvents(db: pg.Pool, session: RawSession, events: readonly AgentEvent[]): Promise<void> {
  const rows = JSON.stringify(events.map((e) => ({ ...e, content_hash: '00', payload: { content: e.content } })));
  await db.query(
    `INSERT INTO agent_events (session_id, organization_id, external_event_id, sequence, revision, type, occurred_at, final, content_hash, payload)
     SELECT $1, $2, x."externalEventId", x.sequence, x.revision, x.type, x."occurredAt", x.final, decode(x.content_hash, 'hex'), x.payload
     FROM jsonb_to_recordset($3::jsonb) AS x("externalEventId" text, sequence bigint, revision int, type text, "occurredAt" timestamptz, final boolean, content_hash text, payload jsonb)`,
    [session.id, session.organizationId, rows],
  );
}
