import Bourne from '@hapi/bourne';
import protobuf from 'protobufjs';
import { classifyLogRecords, type ClassifiedLogs } from '../domain/otel/classify.js';
import {
  logRecordsOf,
  OtlpLimitError,
  OtlpShapeError,
  spansOf,
  type OtelSpan,
  type OtlpLimits,
  type Unusable,
} from '../domain/otel/model.js';
import { OTLP_DESCRIPTOR } from './otlp-descriptor.generated.js';

/**
 * OTLP/HTTP's two encodings (https://opentelemetry.io/docs/specs/otlp/#otlphttp): binary protobuf
 * (`application/x-protobuf`) and protobuf's JSON mapping (`application/json`, trace and span ids in
 * hex). Requests are decoded to Intake's span and log record model (src/domain/otel/model.ts);
 * responses and errors are encoded in the request's own encoding.
 */
export type OtlpEncoding = 'protobuf' | 'json';

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).resolveAll();
const type = (name: string) => root.lookupType(name);
const TRACES_REQUEST = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const TRACES_RESPONSE = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
const LOGS_REQUEST = type('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
const LOGS_RESPONSE = type('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');
const STATUS = type('google.rpc.Status');

/** The encoding a Content-Type names (parameters such as charset ignored); null: not OTLP's. */
export function encodingOf(contentType: string | undefined): OtlpEncoding | null {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/x-protobuf' || media === 'application/protobuf') return 'protobuf';
  if (media === 'application/json') return 'json';
  return null;
}

function decode(message: protobuf.Type, body: Buffer, encoding: OtlpEncoding): unknown {
  if (encoding === 'json') {
    try {
      // Bourne: a `__proto__` key is refused rather than parsed into the prototype.
      return Bourne.parse(body.toString('utf8'), { protoAction: 'error' }) as unknown;
    } catch {
      throw new OtlpShapeError('the body is not valid JSON');
    }
  }
  try {
    return message.toObject(message.decode(body), { longs: String, bytes: String, defaults: false });
  } catch {
    throw new OtlpShapeError(`the body is not a protobuf ${message.name}`);
  }
}

/** How deep messages (or JSON objects and arrays) may nest: OTLP's own structure is about 8 deep; values nest the rest. */
export const MAX_NESTING = 64;

function tooMany(max: number): OtlpLimitError {
  return new OtlpLimitError(`the export holds more than ${max} values (records, spans, attributes and the values inside them)`);
}

/**
 * The messages of a protobuf export counted from the wire, before any is decoded: the type's
 * descriptor tells which length-delimited fields are messages, and the rest is skipped unread.
 * Throws OtlpLimitError past `max` (so a body of millions of two-byte messages costs `max` steps),
 * OtlpShapeError when the wire does not hold together.
 */
function countProtobuf(message: protobuf.Type, body: Uint8Array, max: number): number {
  const reader = protobuf.Reader.create(body);
  const stack: { type: protobuf.Type; end: number }[] = [{ type: message, end: body.length }];
  let count = 0;
  try {
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (reader.pos >= top.end) {
        if (reader.pos > top.end) throw new OtlpShapeError(`the body is not a protobuf ${message.name}`);
        stack.pop();
        continue;
      }
      const tag = reader.uint32();
      const wire = tag & 7;
      const sub = top.type.fieldsById[tag >>> 3]?.resolvedType;
      if (wire === 2 && sub instanceof protobuf.Type) {
        const end = reader.uint32() + reader.pos;
        if (end > top.end || stack.length >= MAX_NESTING) throw new OtlpShapeError(`the body is not a protobuf ${message.name}`);
        if (++count > max) throw tooMany(max);
        stack.push({ type: sub, end });
      } else reader.skipType(wire);
    }
  } catch (error) {
    if (error instanceof OtlpLimitError || error instanceof OtlpShapeError) throw error;
    throw new OtlpShapeError(`the body is not a protobuf ${message.name}`);
  }
  return count;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The values of a JSON export counted from its bytes, before it is parsed: every object, and every
 * other element of an array (the JSON mapping's messages are objects; a scalar in an array is a
 * value too). Strings are skipped, escapes included. Throws OtlpLimitError past `max`,
 * OtlpShapeError past MAX_NESTING; what is not JSON is left to the parser.
 */
function countJson(body: Uint8Array, max: number): number {
  const inArray: boolean[] = [];
  let count = 0;
  let elementDue = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (isSpace(c)) continue;
    if (elementDue) {
      elementDue = false;
      if (c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== CLOSE_ARRAY && ++count > max) throw tooMany(max);
    }
    if (c === QUOTE) {
      for (i++; i < body.length && body[i] !== QUOTE; i++) if (body[i] === BACKSLASH) i++;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (c === OPEN_OBJECT && ++count > max) throw tooMany(max);
      if (inArray.length >= MAX_NESTING) throw new OtlpShapeError(`the body nests deeper than ${MAX_NESTING} levels`);
      inArray.push(c === OPEN_ARRAY);
      elementDue = c === OPEN_ARRAY;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) inArray.pop();
    else if (c === COMMA && inArray[inArray.length - 1]) elementDue = true;
  }
  return count;
}

/** The values an export holds (see OtlpLimits.maxValues), counted without decoding it; throws past `max`. */
export function countValues(signal: 'traces' | 'logs', body: Uint8Array, encoding: OtlpEncoding, max: number): number {
  return encoding === 'json' ? countJson(body, max) : countProtobuf(signal === 'traces' ? TRACES_REQUEST : LOGS_REQUEST, body, max);
}

export interface OtlpDecodeTask {
  signal: 'traces' | 'logs';
  body: Uint8Array;
  encoding: OtlpEncoding;
  limits: OtlpLimits;
  /** Decode only an export of at most this many values (the event loop's share); past it the answer is `elsewhere`. */
  budget?: number;
}

/**
 * A decoded export, or why it is not one: plain data, so that a body thread can answer it. `items`:
 * the spans or log records it held (what the OTLP rate limit counts). A logs export comes back
 * classified: the records nobody keeps are only counted.
 */
export type OtlpDecoded =
  | { kind: 'traces'; spans: OtelSpan[]; unusable: Unusable; items: number }
  | ({ kind: 'logs'; items: number } & ClassifiedLogs)
  | { kind: 'invalid'; message: string }
  | { kind: 'too_large'; message: string }
  | { kind: 'elsewhere' };

/** Counts the export's values (refusing past the limit, or answering `elsewhere` past the budget), then decodes it within the limits. */
export function decodeOtlp(task: OtlpDecodeTask): OtlpDecoded {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  const ids = task.encoding === 'json' ? 'hex' : 'base64';
  const budget = task.budget !== undefined && task.budget < task.limits.maxValues ? task.budget : undefined;
  try {
    try {
      countValues(task.signal, body, task.encoding, budget ?? task.limits.maxValues);
    } catch (error) {
      if (budget !== undefined && error instanceof OtlpLimitError) return { kind: 'elsewhere' };
      throw error;
    }
    if (task.signal === 'traces') {
      const { spans, unusable } = spansOf(decode(TRACES_REQUEST, body, task.encoding), ids, task.limits);
      return { kind: 'traces', spans, unusable, items: spans.length + unusable.count };
    }
    const records = logRecordsOf(decode(LOGS_REQUEST, body, task.encoding), ids, task.limits);
    return { kind: 'logs', items: records.length, ...classifyLogRecords(records) };
  } catch (error) {
    if (error instanceof OtlpShapeError) return { kind: 'invalid', message: error.message };
    if (error instanceof OtlpLimitError) return { kind: 'too_large', message: error.message };
    throw error;
  }
}

/** What `decodeOtlp` answered, or throws the OtlpShapeError or OtlpLimitError it carries. */
export function decodedOf<K extends 'traces' | 'logs'>(outcome: OtlpDecoded, signal: K): Extract<OtlpDecoded, { kind: K }> {
  if (outcome.kind === 'invalid') throw new OtlpShapeError(outcome.message);
  if (outcome.kind === 'too_large') throw new OtlpLimitError(outcome.message);
  if (outcome.kind === 'elsewhere') throw new Error('an export over its budget was not decoded');
  if (outcome.kind !== signal) throw new Error(`decoded ${outcome.kind}, not ${signal}`);
  return outcome as Extract<OtlpDecoded, { kind: K }>;
}

/** OTLP's success body: `partialSuccess` when something was rejected or there is something to say. */
export function encodeExportResponse(
  signal: 'traces' | 'logs',
  outcome: { rejected: number; message: string },
  encoding: OtlpEncoding,
): Buffer | Record<string, unknown> {
  if (outcome.rejected === 0 && !outcome.message) return encoding === 'json' ? {} : Buffer.alloc(0);
  const counted = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  // Protobuf's JSON mapping writes 64-bit integers as strings.
  if (encoding === 'json') return { partialSuccess: { [counted]: String(outcome.rejected), errorMessage: outcome.message } };
  const message = signal === 'traces' ? TRACES_RESPONSE : LOGS_RESPONSE;
  const partialSuccess = { [counted]: outcome.rejected, errorMessage: outcome.message };
  return Buffer.from(message.encode(message.fromObject({ partialSuccess })).finish());
}

/** gRPC status codes an HTTP status maps to (google.rpc.Code). */
function grpcCode(status: number): number {
  if (status === 400) return 3; // INVALID_ARGUMENT
  if (status === 401) return 16; // UNAUTHENTICATED
  if (status === 403) return 7; // PERMISSION_DENIED
  if (status === 404) return 5; // NOT_FOUND
  if (status === 413) return 3;
  if (status === 429) return 8; // RESOURCE_EXHAUSTED
  if (status === 503) return 14; // UNAVAILABLE
  return 13; // INTERNAL
}

/**
 * An error body: OTLP's `Status`. In JSON it carries Intake's `errorCode` (and the error's details)
 * beside `code` and `message`; in protobuf the errorCode ends the message, as the Status message
 * has no field for it.
 */
export function encodeError(
  status: number,
  error: { message: string; errorCode: string } & Record<string, unknown>,
  encoding: OtlpEncoding,
): Buffer | Record<string, unknown> {
  const code = grpcCode(status);
  if (encoding === 'json') return { code, ...error };
  return Buffer.from(STATUS.encode(STATUS.fromObject({ code, message: `${error.message} (errorCode ${error.errorCode})` })).finish());
}
