import { AppError, type ErrorKey } from '../src/errors.js';
import { parseJsonText } from './json-text.js';
import { BODY_PRECHECKS, type BodyPrecheck } from './body-prechecks.js';
import type { MessagePort } from 'node:worker_threads';
import { readSession as read, type SessionOutcome, type SessionTask } from '../src/mcp/read-session.js';
import { compileBody, type JsonSchema, type Validator } from './validation.js';
import { decodeOtlp as decode, type OtlpDecodeTask, type OtlpDecoded } from '../src/otel/otlp-codec.js';

/**
 * A body-checking thread (see `json-body.ts`): parses a large body's text, walks it and validates it
 * against its route's schema, so that none of that runs on the API's event loop. It answers with the
 * error to send, or the checked body as JSON text (with the schema's defaults filled in). It also
 * reads the session files of MCP uploads (`readSession`) and decodes large OTLP exports (`decodeOtlp`).
 */

export interface BodyTask {
  /** The route (its operationId): each thread compiles a route's schema once. */
  key: string;
  schema: JsonSchema;
  text: string;
  /** Run on the parsed body before the schema (see body-prechecks.ts). */
  precheck?: BodyPrecheck;
}

export type BodyOutcome =
  | { kind: 'valid'; json: string }
  | { kind: 'refused'; key: ErrorKey; message: string; details: Record<string, unknown> };

const validators = new Map<string, Validator<unknown>>();

export default function checkBody(task: BodyTask): BodyOutcome {
  let validate = validators.get(task.key);
  if (!validate) {
    validate = compileBody<unknown>(task.schema);
    validators.set(task.key, validate);
  }
  try {
    const body = parseJsonText(task.text);
    if (task.precheck) BODY_PRECHECKS[task.precheck](body);
    return { kind: 'valid', json: JSON.stringify(validate(body)) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { kind: 'refused', key: error.key, message: error.message, details: error.details };
  }
}

export interface SessionThreadTask extends SessionTask {
  /** Told when the thread starts on the task: the API's time budget runs from then. */
  started: MessagePort;
}

/** The other task of these threads: reading an MCP session upload (piscina runs it by this name). */
export async function readSession(task: SessionThreadTask): Promise<SessionOutcome> {
  task.started.postMessage('started');
  task.started.close();
  return read({ content: task.content, format: task.format });
}

/** The third: decoding a large OTLP export (piscina runs it by this name); the body is transferred, not copied. */
export function decodeOtlp(task: OtlpDecodeTask): OtlpDecoded {
  return decode(task);
}
