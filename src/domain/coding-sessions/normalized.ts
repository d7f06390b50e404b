import { lineList } from './jsonl.js';
import { instant, isObject, SessionParseError, type JsonObject, type Line, type ParsedSession, type SessionMessage } from './types.js';

const EVENT_TYPES = new Set(['user_message', 'assistant_message', 'feedback']);

/** Whether one line is an event of the agent chat shape (`{type: user_message|assistant_message|feedback, …}`). */
export function isNormalizedLine(v: JsonObject): boolean {
  return (typeof v.type === 'string' && EVENT_TYPES.has(v.type)) || (Array.isArray(v.events) && !('session' in v));
}

interface Candidate {
  line: number;
  order: number;
  event: JsonObject;
}

/**
 * Normalized events: the agent chat ingest event shape, one per line (or a JSON array, or
 * `{events: [...]}`). `content` is required on messages; `sequence` orders them when every message has one (else file
 * order); a corrected event (same `externalEventId`, higher `revision`) replaces the earlier one;
 * feedback events carry no message text and are skipped.
 */
export function parseNormalized(lines: Line[]): ParsedSession {
  const candidates: Candidate[] = [];
  for (const { line, value } of lines) {
    const events = Array.isArray(value.events) ? value.events : [value];
    for (const event of events) candidates.push({ line, order: candidates.length, event: isObject(event) ? event : {} });
  }
  const wrong = candidates.filter(
    ({ event }) =>
      !(typeof event.type === 'string' && EVENT_TYPES.has(event.type)) || (event.type !== 'feedback' && typeof event.content !== 'string'),
  );
  if (wrong.length > 0) {
    const at = [...new Set(wrong.map((c) => c.line))];
    throw new SessionParseError(
      `not a normalized event (type user_message, assistant_message or feedback with a string content) on line ${lineList(at)}`,
      at,
    );
  }

  const latest = new Map<string, Candidate>();
  const kept: Candidate[] = [];
  for (const c of candidates) {
    if (c.event.type === 'feedback') continue;
    const id = typeof c.event.externalEventId === 'string' ? c.event.externalEventId : null;
    if (id === null) {
      kept.push(c);
      continue;
    }
    const before = latest.get(id);
    if (!before || revision(c.event) >= revision(before.event)) latest.set(id, c);
  }
  kept.push(...latest.values());
  const bySequence = kept.every((c) => typeof c.event.sequence === 'number');
  kept.sort((a, b) => (bySequence ? (a.event.sequence as number) - (b.event.sequence as number) : 0) || a.order - b.order);
  const messages: SessionMessage[] = kept
    .map(({ event }) => ({
      type: event.type as SessionMessage['type'],
      content: (event.content as string).trim(),
      occurredAt: instant(event.occurredAt),
    }))
    .filter((m) => m.content !== '');
  return { format: 'normalized', messages, title: null };
}

const revision = (e: JsonObject) => (typeof e.revision === 'number' ? e.revision : 1);
