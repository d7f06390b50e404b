import Bourne from '@hapi/bourne';
import protobuf from 'protobufjs';
import { logRecordsOf, OtlpShapeError, spansOf, type OtelLogRecord, type OtelSpan, type Unusable } from '../domain/otel/model.js';
import { OTLP_DESCRIPTOR } from './otlp-descriptor.generated.js';

/**
 * OTLP/HTTP's two encodings (https://opentelemetry.io/docs/specs/otlp/#otlphttp): binary protobuf
 * (`application/x-protobuf`) and protobuf's JSON mapping (`application/json`, trace and span ids in
 * hex). Requests are decoded to Intake's span and log record model (src/domain/otel/model.ts);
 * responses and errors are encoded in the request's own encoding.
 */
export type OtlpEncoding = 'protobuf' | 'json';

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR);
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

export function decodeTraces(body: Buffer, encoding: OtlpEncoding): { spans: OtelSpan[]; unusable: Unusable } {
  return spansOf(decode(TRACES_REQUEST, body, encoding), encoding === 'json' ? 'hex' : 'base64');
}

export function decodeLogs(body: Buffer, encoding: OtlpEncoding): OtelLogRecord[] {
  return logRecordsOf(decode(LOGS_REQUEST, body, encoding), encoding === 'json' ? 'hex' : 'base64');
}

export interface OtlpDecodeTask {
  signal: 'traces' | 'logs';
  body: Uint8Array;
  encoding: OtlpEncoding;
}

/** A decoded export, or why it is not one: plain data, so that a body thread can answer it. */
export type OtlpDecoded =
  | { kind: 'traces'; spans: OtelSpan[]; unusable: Unusable }
  | { kind: 'logs'; records: OtelLogRecord[] }
  | { kind: 'invalid'; message: string };

export function decodeOtlp(task: OtlpDecodeTask): OtlpDecoded {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  try {
    if (task.signal === 'traces') return { kind: 'traces', ...decodeTraces(body, task.encoding) };
    return { kind: 'logs', records: decodeLogs(body, task.encoding) };
  } catch (error) {
    if (error instanceof OtlpShapeError) return { kind: 'invalid', message: error.message };
    throw error;
  }
}

/** What `decodeOtlp` answered, or throws the OtlpShapeError it carries. */
export function decodedOf<K extends 'traces' | 'logs'>(outcome: OtlpDecoded, signal: K): Extract<OtlpDecoded, { kind: K }> {
  if (outcome.kind === 'invalid') throw new OtlpShapeError(outcome.message);
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
