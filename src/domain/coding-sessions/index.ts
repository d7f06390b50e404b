import { isClaudeCodeLine, parseClaudeCode } from './claude-code.js';
import { isCodexLine, parseCodex } from './codex.js';
import { readJsonl } from './jsonl.js';
import { isNormalizedLine, parseNormalized } from './normalized.js';
import { SessionMessageTooLargeError } from '../../errors.js';
import { SessionParseError, type JsonObject, type Line, type ParsedSession, type SessionFormat, type SessionMessage } from './types.js';

export { SESSION_FORMATS, SessionParseError, type ParsedSession, type SessionFormat, type SessionMessage } from './types.js';

const PARSERS: Record<SessionFormat, (lines: Line[]) => ParsedSession> = {
  'claude-code': parseClaudeCode,
  codex: parseCodex,
  normalized: parseNormalized,
};
const DETECTORS: [SessionFormat, (v: JsonObject) => boolean][] = [
  ['claude-code', isClaudeCodeLine],
  ['codex', isCodexLine],
  ['normalized', isNormalizedLine],
];

/** The format most lines of the file belong to, or null when no line looks like any of them. */
export function detectFormat(lines: Line[]): SessionFormat | null {
  const votes = new Map<SessionFormat, number>();
  for (const { value } of lines) {
    const match = DETECTORS.find(([, test]) => test(value));
    if (match) votes.set(match[0], (votes.get(match[0]) ?? 0) + 1);
  }
  const best = [...votes].sort((a, b) => b[1] - a[1])[0];
  return best ? best[0] : null;
}

/**
 * Most text one message may hold (characters, 1 MiB): what is stored and masked is bounded per message,
 * not only per file, and a message past it is refused, not cut, so that no upload is stored partly.
 */
export const MAX_MESSAGE_CHARACTERS = 1_048_576;

/**
 * Reads a coding-agent session file: Claude Code or Codex CLI JSONL, or normalized events. Keeps the
 * visible user and assistant text only. Throws `SessionParseError` naming the offending lines, and
 * `SessionMessageTooLargeError` for a message past MAX_MESSAGE_CHARACTERS. Linear in the file's size.
 */
export function parseSession(content: string, format: SessionFormat | 'auto' = 'auto'): ParsedSession {
  const lines = readJsonl(content);
  const chosen = format === 'auto' ? detectFormat(lines) : format;
  if (!chosen) throw new SessionParseError('could not detect the format (claude-code, codex or normalized); pass `format` to choose one');
  const session = PARSERS[chosen](lines);
  const messages = session.messages.map((m) => ({ ...m, content: storable(m.content) })).filter((m) => m.content.trim() !== '');
  messages.forEach(withinLimit);
  return { ...session, title: session.title === null ? null : storable(session.title), messages };
}

function withinLimit(message: SessionMessage, index: number): void {
  if (message.content.length <= MAX_MESSAGE_CHARACTERS) return;
  const role = message.type === 'user_message' ? 'user' : 'assistant';
  throw new SessionMessageTooLargeError({ message: index + 1, role, characters: message.content.length, limit: MAX_MESSAGE_CHARACTERS });
}

/** Text PostgreSQL can store: no NUL characters, no lone surrogates (a JSON escape can carry either). */
export function storable(text: string): string {
  return text.replaceAll('\u0000', '').toWellFormed();
}
