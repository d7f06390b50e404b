import { byOrder, type TelemetryCodingEvent } from '../otel/claude-code.js';

/** An event of a coding session sent as telemetry, as stored (`coding_sessions.events`). */
export interface StoredTelemetryEvent {
  sequence: number;
  key: string;
  type: TelemetryCodingEvent['type'];
  content: string | null;
  occurredAt: string | null;
  details: TelemetryCodingEvent['details'];
}

/**
 * Most events one telemetry session holds: its events are one JSON value, rewritten by each export
 * (docs/decisions/0204). Events past it are rejected with the reason, never dropped silently.
 */
export const MAX_TELEMETRY_EVENTS = 10_000;

export interface AppendOutcome {
  events: StoredTelemetryEvent[];
  accepted: number;
  deduplicated: number;
  /** Events not kept because the session is full. */
  overLimit: number;
}

/**
 * New events appended after the stored ones, in Claude Code's order among themselves, each with the
 * next sequence: a sequence is given once and never changes, so an event that arrives after a later
 * one was stored is appended, not inserted (as agent sessions do, spec rule 7). An event already
 * stored (by its key) is a duplicate: the stored one stays. Pure.
 */
export function appendTelemetryEvents(
  stored: readonly StoredTelemetryEvent[],
  incoming: readonly TelemetryCodingEvent[],
  max = MAX_TELEMETRY_EVENTS,
): AppendOutcome {
  const keys = new Set(stored.map((e) => e.key));
  const events = [...stored];
  let highest = stored.reduce((h, e) => Math.max(h, e.sequence), 0);
  let accepted = 0;
  let deduplicated = 0;
  let overLimit = 0;
  for (const e of [...incoming].sort(byOrder)) {
    if (keys.has(e.key)) {
      deduplicated += 1;
      continue;
    }
    if (events.length >= max) {
      overLimit += 1;
      continue;
    }
    keys.add(e.key);
    highest += 1;
    events.push({ sequence: highest, key: e.key, type: e.type, content: e.content, occurredAt: e.occurredAt, details: e.details });
    accepted += 1;
  }
  return { events, accepted, deduplicated, overLimit };
}
