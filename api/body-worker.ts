import { AppError } from '../src/errors.js';
import { parseJsonText } from './json-text.js';
import { compileBody, type JsonSchema, type Validator } from './validation.js';

/**
 * A body-checking thread (see `json-body.ts`): parses a large body's text, walks it and validates it
 * against its route's schema, so that none of that runs on the API's event loop. It answers with the
 * error to send, or the checked body as JSON text (with the schema's defaults filled in).
 */

export interface BodyTask {
  /** The route (its operationId): each thread compiles a route's schema once. */
  key: string;
  schema: JsonSchema;
  text: string;
}

export type BodyOutcome =
  | { kind: 'valid'; json: string }
  | { kind: 'refused'; status: number; errorCode: string; message: string; details: Record<string, unknown> };

const validators = new Map<string, Validator<unknown>>();

export default function checkBody(task: BodyTask): BodyOutcome {
  let validate = validators.get(task.key);
  if (!validate) {
    validate = compileBody<unknown>(task.schema);
    validators.set(task.key, validate);
  }
  try {
    return { kind: 'valid', json: JSON.stringify(validate(parseJsonText(task.text))) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { kind: 'refused', status: error.status, errorCode: error.errorCode, message: error.message, details: error.details };
  }
}
