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
  secret: string;
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
