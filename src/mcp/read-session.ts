import { parseSession, SessionParseError, type SessionFormat, type SessionMessage } from '../domain/coding-sessions/index.js';
import { sanitizeText } from '../domain/sanitize/index.js';
import { AppError, type ErrorDetails, type ErrorKey } from '../errors.js';

/**
 * The CPU-bound part of an `upload-agent-session` call: parse the file and mask secrets in what is
 * kept. The API runs it in its body-checking threads, within a time budget (`api/json-body.ts`), so
 * that a hostile file costs other requests nothing but a share of the CPU. Its answer is plain data
 * (errors cannot cross a thread as their classes): `sessionOf` turns it back into the session or the
 * error to report.
 */

export interface SessionTask {
  content: string;
  format: SessionFormat | 'auto';
}

export interface SessionEvent {
  sequence: number;
  type: SessionMessage['type'];
  content: string;
  occurredAt: string | null;
}

export interface SessionRead {
  format: SessionFormat;
  /** The title found in the file, masked; null when none. */
  title: string | null;
  events: SessionEvent[];
}

export type SessionOutcome =
  | { kind: 'read'; session: SessionRead }
  | { kind: 'malformed'; message: string; lines: readonly number[] }
  | { kind: 'refused'; key: ErrorKey; message: string; details: ErrorDetails };

const NO_REDACTIONS = { redactedFieldNames: [], redactedTextPatterns: [] };

export async function readSession(task: SessionTask): Promise<SessionOutcome> {
  try {
    const parsed = parseSession(task.content, task.format);
    const events: SessionEvent[] = [];
    for (const [i, m] of parsed.messages.entries()) {
      events.push({ sequence: i + 1, type: m.type, content: sanitizeText(m.content, NO_REDACTIONS), occurredAt: m.occurredAt });
    }
    const title = parsed.title === null ? null : sanitizeText(parsed.title, NO_REDACTIONS);
    return { kind: 'read', session: { format: parsed.format, title, events } };
  } catch (error) {
    if (error instanceof SessionParseError) return { kind: 'malformed', message: error.message, lines: error.lines };
    if (error instanceof AppError) return { kind: 'refused', key: error.key, message: error.message, details: error.details };
    throw error;
  }
}

/** The session read, or throws the `SessionParseError` or `AppError` the outcome carries. */
export function sessionOf(outcome: SessionOutcome): SessionRead {
  if (outcome.kind === 'malformed') throw new SessionParseError(outcome.message, outcome.lines);
  if (outcome.kind === 'refused') throw new AppError(outcome.key, { message: outcome.message, details: outcome.details });
  return outcome.session;
}
