import { MAX_MESSAGE_CHARACTERS, storable } from '../coding-sessions/index.js';
import { sanitizeText, type SanitizeSettings } from '../sanitize/index.js';
import type { AttrValue, OtelLogRecord, Unusable } from './model.js';

/**
 * Claude Code's OpenTelemetry events (issue 35, point 4; https://code.claude.com/docs/en/monitoring-usage)
 * as a coding-agent session. Claude Code sends them as log records of the scope
 * `com.anthropic.claude_code.events`, the body the event's name (`claude_code.user_prompt`), the
 * attributes strings: `session.id`, `event.sequence` (its order within the session), `event.timestamp`,
 * `prompt.id` (the prompt an event followed from), and the event's own. What each becomes:
 *   - `user_prompt`: a user message; its text only when Claude Code logs it (`OTEL_LOG_USER_PROMPTS=1`),
 *     masked as any content (the application's redactions, then secrets), not kept when the
 *     application's content capture is off; its length always;
 *   - `api_request`: a model request (model, tokens, cost, duration). Claude Code does not send
 *     what the model answered;
 *   - `api_error`: a model error (model, status, the error masked, attempt);
 *   - `tool_result`: a tool's run (name, success, duration, decision, the error masked), never its
 *     parameters or output;
 *   - `tool_decision`: whether a tool was allowed, and by what.
 * Other Claude Code events are accepted and not kept. An event's identity is its `event.sequence`
 * (its time and name without one), so a re-sent export adds nothing. Pure: no I/O.
 */

export const CLAUDE_CODE_SCOPE = 'com.anthropic.claude_code.events';

const KEPT = {
  user_prompt: 'user_message',
  api_request: 'model_request',
  api_error: 'model_error',
  tool_result: 'tool_result',
  tool_decision: 'tool_decision',
} as const;

export type TelemetryEventType = (typeof KEPT)[keyof typeof KEPT];
export type Detail = string | number | boolean;

export interface TelemetryCodingEvent {
  /** Its identity within the session: `s<event.sequence>`, else `t<time>-<name>`. */
  key: string;
  type: TelemetryEventType;
  /** The prompt's text, masked; null for other events and for prompts not logged or not captured. */
  content: string | null;
  occurredAt: string | null;
  details: Record<string, Detail>;
  /** Claude Code's order: `event.sequence`, then the time, then the place in the export. */
  order: [number, bigint, number];
}

export interface TelemetryCodingSession {
  externalId: string;
  environment?: string;
  /** Claude Code's version (`app.version`). */
  agentVersion?: string;
  events: TelemetryCodingEvent[];
}

export interface ClaudeCodeMapping {
  sessions: TelemetryCodingSession[];
  rejected: Unusable;
  /** Claude Code events Intake does not keep: accepted. */
  ignored: number;
}

/** Texts (errors) kept at most this long. */
const MAX_TEXT = 2000;

/** The event's short name (`user_prompt`) when the record is one of Claude Code's; null otherwise. */
export function claudeCodeEvent(record: OtelLogRecord): string | null {
  const body = typeof record.body === 'string' ? record.body : '';
  for (const name of [body, record.eventName]) if (name.startsWith('claude_code.')) return name.slice('claude_code.'.length);
  if (record.scope.name === CLAUDE_CODE_SCOPE) return record.eventName || body || 'unnamed';
  return null;
}

const attrOf = (r: OtelLogRecord, key: string): AttrValue | undefined => r.attributes[key] ?? r.resource[key];
const text = (v: AttrValue | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
const int = (v: AttrValue | undefined): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d{1,15}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
};
const decimal = (v: AttrValue | undefined): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};
const bool = (v: AttrValue | undefined): boolean | undefined =>
  v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined;

function isoTime(r: OtelLogRecord): string | null {
  const stamp = text(r.attributes['event.timestamp']);
  if (stamp && !Number.isNaN(Date.parse(stamp))) return new Date(Date.parse(stamp)).toISOString();
  const nanos = r.timeUnixNano || r.observedTimeUnixNano;
  return nanos ? new Date(Number(nanos / 1_000_000n)).toISOString() : null;
}

/** The defined values only, texts cut to MAX_TEXT. */
function defined(values: Record<string, Detail | undefined>): Record<string, Detail> {
  const out: Record<string, Detail> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = typeof v === 'string' ? v.slice(0, MAX_TEXT) : v;
  return out;
}

export interface ClaudeCodeSettings extends SanitizeSettings {
  /** The application's content capture: off, prompts are not kept (their length is). */
  contentCapture: boolean;
}

function eventOf(r: OtelLogRecord, name: keyof typeof KEPT, place: number, settings: ClaudeCodeSettings): TelemetryCodingEvent {
  const a = r.attributes;
  const mask = (v: AttrValue | undefined) => {
    const t = text(v);
    return t === undefined ? undefined : storable(sanitizeText(t.slice(0, MAX_TEXT), settings));
  };
  const sequence = int(a['event.sequence']);
  const time = r.timeUnixNano || r.observedTimeUnixNano;
  const common = { promptId: text(a['prompt.id']) };
  let content: string | null = null;
  let details: Record<string, Detail>;
  switch (name) {
    case 'user_prompt': {
      const prompt = text(a.prompt);
      if (prompt !== undefined && settings.contentCapture) content = storable(sanitizeText(prompt, settings));
      details = defined({ ...common, promptLength: int(a.prompt_length) ?? prompt?.length });
      break;
    }
    case 'api_request':
      details = defined({
        ...common,
        model: text(a.model),
        inputTokens: int(a.input_tokens),
        outputTokens: int(a.output_tokens),
        cacheReadTokens: int(a.cache_read_tokens),
        cacheCreationTokens: int(a.cache_creation_tokens),
        costUsd: decimal(a.cost_usd),
        durationMs: int(a.duration_ms),
      });
      break;
    case 'api_error':
      details = defined({
        ...common,
        model: text(a.model),
        statusCode: text(a.status_code),
        error: mask(a.error),
        attempt: int(a.attempt),
        durationMs: int(a.duration_ms),
      });
      break;
    case 'tool_result':
      details = defined({
        ...common,
        toolName: text(a.tool_name),
        success: bool(a.success),
        durationMs: int(a.duration_ms),
        decision: text(a.decision),
        decisionSource: text(a.source) ?? text(a.decision_source),
        error: mask(a.error),
        resultSizeBytes: int(a.tool_result_size_bytes),
      });
      break;
    case 'tool_decision':
      details = defined({ ...common, toolName: text(a.tool_name), decision: text(a.decision), decisionSource: text(a.source) });
      break;
  }
  return {
    key: sequence !== undefined ? `s${sequence}` : `t${time}-${name}`,
    type: KEPT[name],
    content,
    occurredAt: isoTime(r),
    details,
    order: [sequence ?? Number.MAX_SAFE_INTEGER, time, place],
  };
}

/** Claude Code's records of one export as sessions (by `session.id`), each in Claude Code's order. */
export function mapClaudeCodeRecords(records: readonly OtelLogRecord[], settings: ClaudeCodeSettings): ClaudeCodeMapping {
  const rejected: Unusable = { count: 0, reasons: [] };
  let ignored = 0;
  const sessions = new Map<string, TelemetryCodingSession>();
  records.forEach((r, place) => {
    const name = claudeCodeEvent(r);
    if (name === null) return;
    if (!Object.hasOwn(KEPT, name)) {
      ignored += 1;
      return;
    }
    const externalId = text(attrOf(r, 'session.id'))?.trim();
    if (!externalId || externalId.length > 512) {
      rejected.count += 1;
      rejected.reasons.push(`a claude_code.${name} record without a usable session.id`);
      return;
    }
    let session = sessions.get(externalId);
    if (!session) {
      const environment = text(attrOf(r, 'deployment.environment.name')) ?? text(attrOf(r, 'deployment.environment'));
      const version = text(attrOf(r, 'app.version')) ?? text(r.resource['service.version']);
      session = {
        externalId,
        ...(environment ? { environment: environment.slice(0, 64) } : {}),
        ...(version ? { agentVersion: version.slice(0, 200) } : {}),
        events: [],
      };
      sessions.set(externalId, session);
    }
    const event = eventOf(r, name as keyof typeof KEPT, place, settings);
    if (event.content !== null && event.content.length > MAX_MESSAGE_CHARACTERS) {
      rejected.count += 1;
      rejected.reasons.push(`a prompt of ${event.content.length} characters: at most ${MAX_MESSAGE_CHARACTERS} are kept`);
      return;
    }
    session.events.push(event);
  });
  for (const s of sessions.values()) s.events.sort(byOrder);
  return { sessions: [...sessions.values()], rejected, ignored };
}

export function byOrder(a: TelemetryCodingEvent, b: TelemetryCodingEvent): number {
  if (a.order[0] !== b.order[0]) return a.order[0] - b.order[0];
  if (a.order[1] !== b.order[1]) return a.order[1] < b.order[1] ? -1 : 1;
  return a.order[2] - b.order[2];
}
