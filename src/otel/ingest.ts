import pLimit from 'p-limit';
import type { CommonQueryMethods } from 'slonik';
import type { IngestResult } from '../agents/ingest.js';
import { createAjv, errorMessage, errorPath } from '../contracts/ajv.js';
import { ingestBody, oversizedEvents } from '../contracts/agent-ingest.js';
import { eventPlacements } from '../db/repositories/agent-conversations.js';
import type { AgentIngestRequest } from '../domain/agent-ingest.js';
import { mapGenAiSpans, type GenAiSession } from '../domain/otel/genai.js';
import { ingestRequests } from '../domain/otel/ingest-request.js';
import type { OtelSpan, Unusable } from '../domain/otel/model.js';
import { AppError } from '../errors.js';

/** Writes one REST-shaped ingest request with the caller's credential (its checks, sanitizing, dedupe, revisions, metering). */
export type SessionWrite = (request: AgentIngestRequest) => Promise<IngestResult>;

/** What an OTLP export stored, and what it could not: OTLP's `partialSuccess` counts `rejected`. */
export interface OtlpIngestOutcome {
  /** Spans (or log records) rejected, and why (one line per reason, at most 20). */
  rejected: number;
  reasons: string[];
  /** Spans with no GenAI messages: accepted, nothing to store. */
  ignored: number;
  sessions: { externalSessionId: string; sessionId: string; accepted: number; deduplicated: number; revised: number }[];
}

/** Conflicts another writer of the same session caused between the read of its sequences and the write: read again. */
const RACES = new Set(['sequence_occupied', 'event_sequence_changed']);
const ATTEMPTS = 3;
const MAX_REASONS = 20;

const validate = createAjv().compile(ingestBody);

/**
 * OTLP ingest (issue 35): GenAI spans as agent sessions, through the same writer as REST ingest. A
 * session's sequences are assigned here from what is stored (spec rule 7), one writer of a session at
 * a time in this process; a writer in another process that took the same sequences first makes the
 * write fail with a conflict that stored nothing, and the session is placed again.
 */
export class OtlpIngest {
  /** The session writes in progress in this process, by application and session. */
  private readonly sessions = new Map<string, Promise<unknown>>();

  constructor(private readonly db: CommonQueryMethods) {}

  async spans(
    app: { id: string; agentKey: string },
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
      ignored: mapping.ignored,
      sessions: [],
    };
    // A request's sessions, four at a time (the writer batches them with other requests').
    const sessionsAtOnce = pLimit(4);
    const written = await Promise.all(
      mapping.sessions.map((session) =>
        sessionsAtOnce(() => this.oneAtATime(`${app.id}\u0000${session.externalSessionId}`, () => this.session(app, session, write))),
      ),
    );
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

  private async oneAtATime<T>(key: string, run: () => Promise<T>): Promise<T> {
    const before = this.sessions.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(run);
    this.sessions.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.sessions.get(key) === mine) this.sessions.delete(key);
    }
  }

  private async session(
    app: { id: string; agentKey: string },
    session: GenAiSession,
    write: SessionWrite,
  ): Promise<OtlpIngestOutcome['sessions'][number] | { reason: string }> {
    for (let attempt = 1; ; attempt++) {
      const placed = await eventPlacements(
        this.db,
        app.id,
        session.externalSessionId,
        session.messages.map((m) => m.externalEventId),
      );
      const requests = ingestRequests(app.agentKey, session, {
        highestSequence: placed.highest_sequence,
        stored: new Map(placed.stored.map((s) => [s.id, s])),
      });
      // Every request is checked before the first is written: a session refused stores nothing.
      const refused = requests.map(refusal).find((r) => r !== null);
      if (refused) return { reason: refused };
      const total = { externalSessionId: session.externalSessionId, sessionId: '', accepted: 0, deduplicated: 0, revised: 0 };
      try {
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
        if (RACES.has(error.errorCode) && attempt < ATTEMPTS) continue;
        return { reason: `${error.message} (errorCode ${error.errorCode})` };
      }
    }
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
