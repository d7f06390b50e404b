import Bourne from '@hapi/bourne';
import { MalformedJsonError } from '../src/errors.js';

/** RFC 8259 whitespace, then an object or an array. */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

/**
 * A request body's text as JSON, with co-body's strict rules (what the body parser applied before):
 * an object or an array only, `__proto__` keys refused (prototype poisoning), an empty body `{}`.
 * Anything else is a 400 `malformed_json`.
 */
export function parseJsonText(text: string): unknown {
  if (!text) return {};
  if (!OBJECT_OR_ARRAY.test(text)) throw new MalformedJsonError();
  try {
    return Bourne.parse(text, { protoAction: 'error' });
  } catch {
    throw new MalformedJsonError();
  }
}
