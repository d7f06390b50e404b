import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { TestApi } from '../../harness/app.js';

/** Sends `items` with an OpenTelemetry exporter (spans or log records) and waits: rejects unless it succeeded. */
export function exportWith<T>(exporter: { export(items: T[], done: (result: ExportResult) => void): void }, items: T[]): Promise<void> {
  return new Promise((resolve, reject) =>
    exporter.export(items, (result) =>
      result.code === ExportResultCode.SUCCESS ? resolve() : reject(result.error ?? new Error(`export failed: ${result.code}`)),
    ),
  );
}

/** An agent session event as `GET /v3/rest/agent-conversations/sessions/{sessionId}` answers it (the fields the OTLP tests read). */
export interface StoredAgentEvent {
  externalEventId: string;
  sequence: number;
  type: string;
  content: string;
  final?: boolean;
  model?: unknown;
  usage?: { inputTokens?: number; outputTokens?: number; latencyMs?: number };
  trace?: unknown;
  toolCalls?: unknown;
}

/**
 * The session the application stored under `externalSessionId`, read through the REST API as an
 * integrator reads it (the newest 100 of the application's sessions are searched); null when there is none.
 */
export async function agentSessionOf(
  api: TestApi,
  reader: { apiKey: string; applicationId: string },
  externalSessionId: string,
): Promise<{ sessionId: string; processedThroughSequence: number | null; events: StoredAgentEvent[] } | null> {
  const headers = { 'X-Service-Api-Key': reader.apiKey };
  const list = await api.request(`/v3/rest/agent-conversations/sessions?applicationId=${reader.applicationId}&limit=100`, { headers });
  const found = (list.body.sessions as { sessionId: string; externalSessionId: string }[]).find(
    (s) => s.externalSessionId === externalSessionId,
  );
  if (!found) return null;
  return (await api.request(`/v3/rest/agent-conversations/sessions/${found.sessionId}`, { headers })).body;
}

/** The conversation test/otel-matrix/chat.py has with its fake OpenAI server, whatever instruments it: [type, content] a message. */
export const CHAT_PY_CONVERSATION = [
  ['user_message', 'Where is my parcel?'],
  ['assistant_message', 'Answer to: Where is my parcel?'],
  ['user_message', 'Can it come on Friday?'],
  ['assistant_message', 'Answer to: Can it come on Friday?'],
];
