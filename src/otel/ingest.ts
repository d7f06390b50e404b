import pLimit from 'p-limit';
import type { IngestResult } from '../agents/ingest.js';
import { createAjv, errorMessage, errorPath } from '../contracts/ajv.js';
import { ingestBody, oversizedEvents } from '../contracts/agent-ingest.js';
import type { AgentIngestRequest } from '../domain/agent-ingest.js';
import { mapGenAiSpans, type GenAiSession } from '../domain/otel/genai.js';
import { ingestRequests } from '../domain/otel/ingest-request.js';
import type { OtelSpan, Unusable } from '../domain/otel/model.js';
import { AppError } from '../errors.js';

/**
 * Writes one REST-shaped ingest request with the caller's credential (its checks, sanitizing, dedupe,
 * revisions, metering), its sequences placed under the session's lock (`placeSequences`).
 */
export type SessionWrite = (request: AgentIngestRequest) => Promise<IngestResult>;

/** What an OTLP export stored, and what it could not: OTLP's `partialSuccess` counts `rejected`. */
export interface OtlpIngestOutcome {
  /** Spans (or log records) rejected, and why (one line per reason, at most 20). */
  rejected: number;
  reasons: string[];
  /** Spans with no GenAI messages (or the log records they were read from): accepted, nothing to store. */
  ignored: number;
  sessions: { externalSessionId: string; sessionId: string; accepted: number; deduplicated: number; revised: number }[];
}

const MAX_REASONS = 20;

const validate = createAjv().compile(ingestBody);

/**
 * OTLP ingest (issue 35): GenAI spans as agent sessions, through the same writer as REST ingest. The
 * writer assigns a session's sequences in its transaction, under the session's row lock (spec rule
 * 7, decision 0203): exports of one session, in this process or another, need no coordination here.
 */
export async function ingestSpans(
  agentKey: string,
  spans: readonly OtelSpan[],
  unusable: Unusable,
  write: SessionWrite,
  /** What a span counts for in `rejected`: 1, or the log records it was read from. */
  weight: (spanId: string) => number = () => 1,
): Promise<OtlpIngestOutcome> {
  const mapping = mapGenAiSpans(spans);
  const weigh = (spanIds: Iterable<string>) => [...spanIds].reduce((n, id) => n + weight(id), 0);
  const outcome: OtlpIngestOutcome = {
    rejected: unusable.count + weigh(mapping.rejected.spanIds),
    reasons: [...unusable.reasons, ...mapping.rejected.reasons],
    ignored: weigh(mapping.ignored),
    sessions: [],
  };
  // A request's sessions, four at a time (the writer batches them with other requests').
  const sessionsAtOnce = pLimit(4);
  const written = await Promise.all(mapping.sessions.map((session) => sessionsAtOnce(() => ingestSession(agentKey, session, write))));
  for (const [i, result] of written.entries()) {
    const session = mapping.sessions[i]!;
    if ('reason' in result) {
      outcome.rejected += weigh(new Set(session.messages.map((m) => m.trace.spanId)));
      outcome.reasons.push(`session ${JSON.stringify(session.externalSessionId)}: ${result.reason}`);
    } else outcome.sessions.push(result);
  }
  outcome.reasons = summarize(outcome.reasons);
  return outcome;
}

/** One session's requests, in order; the first refusal stops it and is its reason. */
async function ingestSession(
  agentKey: string,
  session: GenAiSession,
  write: SessionWrite,
): Promise<OtlpIngestOutcome['sessions'][number] | { reason: string }> {
  const requests = ingestRequests(agentKey, session);
  // Every request is checked before the first is written: a session refused stores nothing.
  const refused = requests.map(refusal).find((r) => r !== null);
  if (refused) return { reason: refused };
  const total = { externalSessionId: session.externalSessionId, sessionId: '', accepted: 0, deduplicated: 0, revised: 0 };
  try {
    // In order: a later request's messages follow an earlier one's.
    for (const request of requests) {
      const result = await write(request);
      total.sessionId = result.sessionId;
      total.accepted += result.acceptedEventCount;
      total.deduplicated += result.deduplicatedEventCount;
      total.revised += result.revisedEventCount;
    }
    return total;
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return { reason: `${error.message} (errorCode ${error.errorCode})` };
  }
}

/** Why REST ingest would refuse the request before storing anything (its schema, then the spec's event size); null: it would not. */
function refusal(request: AgentIngestRequest): string | null {
  if (!validate(request)) {
    const error = validate.errors?.[0];
    return error ? `${errorPath(error)} ${errorMessage(error)}` : 'not a valid session';
  }
  const [tooLarge] = oversizedEvents(request);
  return tooLarge ? `${tooLarge.path} ${tooLarge.message}` : null;
}

/** Reasons, the same ones counted once: at most MAX_REASONS lines. */
export function summarize(reasons: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const lines = [...counts].map(([r, n]) => (n > 1 ? `${r} (${n} times)` : r));
  return lines.length > MAX_REASONS ? [...lines.slice(0, MAX_REASONS), `and ${lines.length - MAX_REASONS} more`] : lines;
}
