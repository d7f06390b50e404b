/**
 * OTLP requests as Intake reads them (issue 35): spans and log records with their attributes as
 * plain values, whatever the wire format. `protobuf` objects come from protobufjs's `toObject`
 * (camelCase names, 64-bit integers as strings, bytes as base64); `json` objects are OTLP/JSON as
 * parsed (camelCase, or the proto's snake_case names, which protobuf's JSON mapping also accepts;
 * trace and span ids in hex, as OTLP/JSON requires). Pure: no I/O.
 */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export interface OtelScope {
  name: string;
  version: string;
}

export interface OtelSpanEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Attributes;
  /** The message's identity within its span when it is not its place (GenAI events sent as log records). */
  key?: string;
}

export interface OtelSpan {
  /** Lower-case hex, 32 characters. */
  traceId: string;
  /** Lower-case hex, 16 characters. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  events: OtelSpanEvent[];
  resource: Attributes;
  scope: OtelScope;
}

export interface OtelLogRecord {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  /** The event's name (`event_name`, or the `event.name` attribute of older SDKs); '' when neither. */
  eventName: string;
  body: AttrValue;
  attributes: Attributes;
  traceId: string | null;
  spanId: string | null;
  resource: Attributes;
  scope: OtelScope;
}

/** Where the ids come from: hex strings (OTLP/JSON) or base64 (protobuf bytes through toObject). */
export type IdEncoding = 'hex' | 'base64';

/** The request is not an OTLP export request at all: a 400. */
export class OtlpShapeError extends Error {}

/**
 * What one export may hold (issue 50): spans or log records, attributes of one span, event, record,
 * resource or scope (and events of one span), and values in all (every message of the request: each
 * record, span, attribute and nested value counts one). Past one: a 413, before the rest is read.
 */
export interface OtlpLimits {
  maxItems: number;
  maxAttributes: number;
  maxValues: number;
}

/** The export holds more than `OtlpLimits` allow: a 413 whose message says which limit. */
export class OtlpLimitError extends Error {}

export interface Unusable {
  /** Spans or log records left out, each for a reason. */
  count: number;
  reasons: string[];
}

const MAX_DEPTH = 16;

export type Obj = Record<string, unknown>;
/** A JSON object (not an array, not null). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** snake_case names of the camelCase field names asked for (a handful: computed once each). */
const SNAKE = new Map<string, string>();

/** A field by its camelCase name or its proto (snake_case) name. */
function field(o: Obj, camel: string): unknown {
  const v = o[camel];
  if (v !== undefined) return v;
  let snake = SNAKE.get(camel);
  if (snake === undefined) {
    snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    SNAKE.set(camel, snake);
  }
  return snake === camel ? undefined : o[snake];
}

function list(o: Obj, camel: string, where: string): unknown[] {
  const v = field(o, camel);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpShapeError(`${where}.${camel} must be an array`);
  return v;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Nanoseconds since the epoch: a decimal string or a number; 0 when absent or unreadable. */
export function nanos(v: unknown): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return BigInt(v);
  return 0n;
}

function id(v: unknown, bytes: number, encoding: IdEncoding): string | null {
  if (typeof v !== 'string' || v === '') return null;
  const hex = encoding === 'hex' ? v.toLowerCase() : Buffer.from(v, 'base64').toString('hex');
  if (hex.length !== bytes * 2 || !/^[0-9a-f]+$/.test(hex) || /^0+$/.test(hex)) return null;
  return hex;
}

/** An AnyValue as a plain value (bytes stay base64; 64-bit integers beyond 2^53 stay strings). */
export function anyValue(v: unknown, depth = 0): AttrValue {
  if (!isObj(v) || depth > MAX_DEPTH) return null;
  const s = field(v, 'stringValue');
  if (typeof s === 'string') return s;
  const b = field(v, 'boolValue');
  if (typeof b === 'boolean') return b;
  const i = field(v, 'intValue');
  if (typeof i === 'number') return i;
  if (typeof i === 'string' && /^-?\d+$/.test(i)) {
    const n = Number(i);
    return Number.isSafeInteger(n) ? n : i;
  }
  const d = field(v, 'doubleValue');
  if (typeof d === 'number') return d;
  if (typeof d === 'string' && ['NaN', 'Infinity', '-Infinity'].includes(d)) return null;
  const a = field(v, 'arrayValue');
  if (isObj(a)) {
    const values = field(a, 'values');
    return Array.isArray(values) ? values.map((x) => anyValue(x, depth + 1)) : [];
  }
  const kv = field(v, 'kvlistValue');
  if (isObj(kv)) return attributes(field(kv, 'values'), depth + 1);
  const bytes = field(v, 'bytesValue');
  if (typeof bytes === 'string') return bytes;
  return null;
}

/** A list of KeyValue as an object (a repeated key: the last one holds); `max`: past that many, an OtlpLimitError. */
export function attributes(v: unknown, depth = 0, max = Infinity): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(v)) return out;
  if (v.length > max) throw new OtlpLimitError(`an element has ${v.length} attributes, over the ${max} an export may give one`);
  for (const kv of v) {
    if (!isObj(kv) || typeof kv.key !== 'string' || kv.key === '__proto__') continue;
    out[kv.key] = anyValue(kv.value, depth);
  }
  return out;
}

function scopeOf(o: Obj): OtelScope {
  const scope = field(o, 'scope');
  return isObj(scope) ? { name: str(scope.name), version: str(scope.version) } : { name: '', version: '' };
}

function resourceOf(o: Obj, limits: OtlpLimits): Attributes {
  const resource = field(o, 'resource');
  return isObj(resource) ? attributes(resource.attributes, 0, limits.maxAttributes) : {};
}

/** Counts the spans or records read so far against `maxItems`. */
function counter(limits: OtlpLimits, what: string) {
  let items = 0;
  return (more: number) => {
    items += more;
    if (items > limits.maxItems)
      throw new OtlpLimitError(`the export holds more than ${limits.maxItems} ${what}, the most one export may hold`);
  };
}

function requestObject(request: unknown): Obj {
  if (!isObj(request)) throw new OtlpShapeError('the body must be an OTLP export request (an object)');
  return request;
}

/** The spans of an ExportTraceServiceRequest; spans without a usable trace or span id are counted, not kept. */
export function spansOf(request: unknown, ids: IdEncoding, limits: OtlpLimits): { spans: OtelSpan[]; unusable: Unusable } {
  const spans: OtelSpan[] = [];
  const unusable: Unusable = { count: 0, reasons: [] };
  const count = counter(limits, 'spans');
  for (const rs of list(requestObject(request), 'resourceSpans', 'request')) {
    if (!isObj(rs)) throw new OtlpShapeError('resourceSpans items must be objects');
    const resource = resourceOf(rs, limits);
    for (const ss of list(rs, 'scopeSpans', 'resourceSpans')) {
      if (!isObj(ss)) throw new OtlpShapeError('scopeSpans items must be objects');
      const scope = scopeOf(ss);
      const listed = list(ss, 'spans', 'scopeSpans');
      count(listed.length);
      for (const s of listed) {
        if (!isObj(s)) throw new OtlpShapeError('spans items must be objects');
        const traceId = id(field(s, 'traceId'), 16, ids);
        const spanId = id(field(s, 'spanId'), 8, ids);
        if (!traceId || !spanId) {
          unusable.count += 1;
          unusable.reasons.push('a span without a valid traceId and spanId');
          continue;
        }
        spans.push({
          traceId,
          spanId,
          parentSpanId: id(field(s, 'parentSpanId'), 8, ids),
          name: str(s.name),
          startTimeUnixNano: nanos(field(s, 'startTimeUnixNano')),
          endTimeUnixNano: nanos(field(s, 'endTimeUnixNano')),
          attributes: attributes(s.attributes, 0, limits.maxAttributes),
          events: eventsOf(s, limits).flatMap((e) =>
            isObj(e)
              ? [
                  {
                    name: str(e.name),
                    timeUnixNano: nanos(field(e, 'timeUnixNano')),
                    attributes: attributes(e.attributes, 0, limits.maxAttributes),
                  },
                ]
              : [],
          ),
          resource,
          scope,
        });
      }
    }
  }
  return { spans, unusable };
}

function eventsOf(span: Obj, limits: OtlpLimits): unknown[] {
  const events = list(span, 'events', 'spans');
  if (events.length > limits.maxAttributes)
    throw new OtlpLimitError(`a span has ${events.length} events, over the ${limits.maxAttributes} an export may give one`);
  return events;
}

/** The log records of an ExportLogsServiceRequest (a record's trace and span ids are optional). */
export function logRecordsOf(request: unknown, ids: IdEncoding, limits: OtlpLimits): OtelLogRecord[] {
  const records: OtelLogRecord[] = [];
  const count = counter(limits, 'log records');
  for (const rl of list(requestObject(request), 'resourceLogs', 'request')) {
    if (!isObj(rl)) throw new OtlpShapeError('resourceLogs items must be objects');
    const resource = resourceOf(rl, limits);
    for (const sl of list(rl, 'scopeLogs', 'resourceLogs')) {
      if (!isObj(sl)) throw new OtlpShapeError('scopeLogs items must be objects');
      const scope = scopeOf(sl);
      const listed = list(sl, 'logRecords', 'scopeLogs');
      count(listed.length);
      for (const r of listed) {
        if (!isObj(r)) throw new OtlpShapeError('logRecords items must be objects');
        const attrs = attributes(r.attributes, 0, limits.maxAttributes);
        const named = str(field(r, 'eventName'));
        records.push({
          timeUnixNano: nanos(field(r, 'timeUnixNano')),
          observedTimeUnixNano: nanos(field(r, 'observedTimeUnixNano')),
          eventName: named || (typeof attrs['event.name'] === 'string' ? attrs['event.name'] : ''),
          body: anyValue(r.body),
          attributes: attrs,
          traceId: id(field(r, 'traceId'), 16, ids),
          spanId: id(field(r, 'spanId'), 8, ids),
          resource,
          scope,
        });
      }
    }
  }
  return records;
}
