import { isObj, type Attributes, type AttrValue, type OtelLogRecord, type OtelSpan, type OtelSpanEvent, type Unusable } from './model.js';

/**
 * GenAI events sent as log records (issue 35), as the Python instrumentations do
 * (opentelemetry-instrumentation-openai-v2 and others): each record names its span by trace and span
 * id, so the records of one span are read as that span, with the records as its events, and mapped
 * by the span mapping (genai.ts). Two shapes:
 *   - `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.system.message`,
 *     `gen_ai.tool.message` and `gen_ai.choice` (semantic conventions 1.26 to 1.36): the message is
 *     the record's body (`{content, tool_calls}`, a choice's `{index, finish_reason, message}`), as
 *     a map or, from Semantic Kernel, as JSON text;
 *   - `gen_ai.client.inference.operation.details` (1.37 and later): the messages, model and usage are
 *     the record's attributes, as they would be the span's.
 * A message record's identity is its time (then its place among records of the same time), not its
 * place in the export: the SDK's batch processor may send one call's input and its answer in two
 * exports, and a re-sent export is the same events. Pure: no I/O.
 */

const MESSAGE_EVENTS = new Set([
  'gen_ai.user.message',
  'gen_ai.assistant.message',
  'gen_ai.system.message',
  'gen_ai.tool.message',
  'gen_ai.choice',
]);
const DETAILS_EVENT = 'gen_ai.client.inference.operation.details';

export function isGenAiRecord(record: OtelLogRecord): boolean {
  return MESSAGE_EVENTS.has(record.eventName) || record.eventName === DETAILS_EVENT;
}

/** Attributes a record carries about its call: kept on the span it stands for (the event's name is not). */
function callAttributes(record: OtelLogRecord): Attributes {
  const { ['event.name']: _name, ...rest } = record.attributes;
  return rest;
}

/**
 * A record's body: a map (OpenTelemetry's instrumentations), or the same map as JSON text (Semantic
 * Kernel writes it through Python's logging); other text is the message's text itself.
 */
function bodyOf(body: AttrValue): AttrValue {
  if (typeof body !== 'string' || !/^\s*\{/.test(body)) return body;
  try {
    const parsed = JSON.parse(body) as unknown;
    return isObj(parsed) ? (parsed as AttrValue) : body;
  } catch {
    return body;
  }
}

/** The GenAI records as the spans they belong to; records without trace and span ids cannot be placed. */
export function genAiLogSpans(records: readonly OtelLogRecord[]): { spans: OtelSpan[]; unusable: Unusable } {
  const unusable: Unusable = { count: 0, reasons: [] };
  const spans = new Map<string, OtelSpan>();
  const seen = new Map<string, number>();
  for (const record of records) {
    if (!record.traceId || !record.spanId) {
      unusable.count += 1;
      unusable.reasons.push(`a ${record.eventName} record without a valid traceId and spanId (its model call cannot be known)`);
      continue;
    }
    const time = record.timeUnixNano || record.observedTimeUnixNano;
    const spanKey = `${record.traceId}-${record.spanId}`;
    let span = spans.get(spanKey);
    if (!span) {
      span = {
        traceId: record.traceId,
        spanId: record.spanId,
        parentSpanId: null,
        name: record.eventName,
        startTimeUnixNano: time,
        endTimeUnixNano: time,
        attributes: {},
        events: [],
        resource: record.resource,
        scope: record.scope,
      };
      spans.set(spanKey, span);
    }
    if (time && (!span.startTimeUnixNano || time < span.startTimeUnixNano)) span.startTimeUnixNano = time;
    if (time > span.endTimeUnixNano) span.endTimeUnixNano = time;
    if (record.eventName === DETAILS_EVENT) {
      span.attributes = { ...span.attributes, ...callAttributes(record) };
      continue;
    }
    span.attributes = { ...callAttributes(record), ...span.attributes };
    const at = `${spanKey}-${time}`;
    const nth = seen.get(at) ?? 0;
    seen.set(at, nth + 1);
    const body = bodyOf(record.body);
    const event: OtelSpanEvent = {
      name: record.eventName,
      timeUnixNano: time,
      // The body is the event's content; `gen_ai.event.content` is where the span mapping reads it.
      attributes: isObj(body) ? { 'gen_ai.event.content': body } : { content: body },
      key: time ? `l${time}${nth ? `.${nth}` : ''}` : `p${span.events.length}`,
    };
    span.events.push(event);
  }
  return { spans: [...spans.values()], unusable };
}
