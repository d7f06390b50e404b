/** The session file formats `upload-agent-session` reads. */
export const SESSION_FORMATS = ['normalized', 'claude-code', 'codex'] as const;
export type SessionFormat = (typeof SESSION_FORMATS)[number];

/** One visible message of a coding-agent session: what the user typed or the assistant answered. */
export interface SessionMessage {
  type: 'user_message' | 'assistant_message';
  content: string;
  /** ISO 8601 UTC instant when the file carries one. */
  occurredAt: string | null;
}

export interface ParsedSession {
  format: SessionFormat;
  messages: SessionMessage[];
  /** A title found in the file (Claude Code's summary line), else null. */
  title: string | null;
}

/** A file that cannot be read as a session; `lines` names the offending 1-based line numbers. */
export class SessionParseError extends Error {
  constructor(
    message: string,
    readonly lines: readonly number[] = [],
  ) {
    super(message);
    this.name = 'SessionParseError';
  }
}

export type JsonObject = Record<string, unknown>;

/** A JSON object read from one line of the file. */
export interface Line {
  line: number;
  value: JsonObject;
}

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A timestamp as an ISO 8601 UTC instant, or null when absent or unreadable. */
export function instant(value: unknown): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const ms = typeof value === 'number' ? (value < 1e12 ? value * 1000 : value) : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}
