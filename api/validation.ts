import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ValidationError, type FieldError } from '../src/errors.js';
import { createAjv, errorMessage, errorPath } from '../src/contracts/ajv.js';

import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

import type { JsonSchema } from '../src/contracts/json-schema.js';

export type { JsonSchema };

/**
 * The type of a value a schema lets through, derived from the schema itself: schemas are declared
 * `as const` so `FromSchema` can read them. `unknown` for no schema (a route without a body or query).
 * Properties with a `default` are present after validation (Ajv's `useDefaults`), as FromSchema assumes.
 */
export type Validated<S> = [S] extends [undefined] ? unknown : S extends JSONSchema ? FromSchema<S> : unknown;

/**
 * One Ajv instance for JSON bodies (strict, every error reported, unknown keys rejected by the
 * schemas' `additionalProperties: false`) and one for query strings, where every value arrives as
 * a string: it coerces types and fills defaults. Schemas are compiled once, when a route is defined.
 */
const bodyAjv = createAjv({ allErrors: true, useDefaults: true });
/** The same rules, stopping at the first error: for bodies too large to list every error of. */
const firstErrorBodyAjv = createAjv({ allErrors: false, useDefaults: true });
const queryAjv = createAjv({ allErrors: true, useDefaults: true, coerceTypes: 'array' });

export type Validator<T> = (value: unknown) => T;

export function toFieldErrors(errors: ErrorObject[] | null | undefined, root: string): FieldError[] {
  return (errors ?? []).map((e) => {
    const path = errorPath(e);
    return { path: path ? `${root}.${path}` : root, message: errorMessage(e) };
  });
}

/** The deepest nesting a body or query may have: far more than any schema here needs, far less than the stack. */
export const MAX_JSON_DEPTH = 64;
/** A 400 lists at most this many errors. */
export const MAX_REPORTED_ERRORS = 50;
/**
 * Bodies with more values than this are checked for their first error only: with every error
 * reported, a body of millions of bad values would cost millions of error objects.
 */
const ALL_ERRORS_MAX_VALUES = 10_000;

interface Inspection {
  /** Paths of strings, or of objects with keys, holding U+0000. */
  nul: string[];
  /** The first path nested deeper than MAX_JSON_DEPTH, or null. */
  tooDeep: string | null;
  /** Values seen (the walk stops at the first too-deep one). */
  values: number;
}

/**
 * One iterative walk of the input (no recursion: a body of 100,000 nested arrays must not overflow
 * the stack): PostgreSQL text and jsonb cannot hold U+0000, so a NUL anywhere in a string or a key
 * is a 400 for every route, instead of a database error on the way in; nesting past
 * MAX_JSON_DEPTH is a 400 too. Memory is bounded by the depth, not by the size.
 */
export function inspectJson(value: unknown, root: string): Inspection {
  const result: Inspection = { nul: [], tooDeep: null, values: 0 };
  const frames: { items: unknown[]; keys: string[] | null; next: number }[] = [];
  /** The path of the value the first `depth` frames lead to. */
  const pathOf = (depth: number) =>
    [root, ...frames.slice(0, depth).map((f) => (f.keys ? f.keys[f.next - 1]! : String(f.next - 1)))].join('.');
  let current: unknown = value;
  for (;;) {
    result.values++;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) result.nul.push(pathOf(frames.length));
    } else if (current !== null && typeof current === 'object') {
      if (frames.length >= MAX_JSON_DEPTH) {
        result.tooDeep = pathOf(frames.length);
        return result;
      }
      if (Array.isArray(current)) {
        frames.push({ items: current, keys: null, next: 0 });
      } else {
        const keys = Object.keys(current);
        frames.push({ items: keys.map((k) => (current as Record<string, unknown>)[k]), keys, next: 0 });
      }
    }
    // The next value: the next item of the innermost container that has one. A key holding NUL is
    // reported as its object's path, and its value is not looked into.
    for (;;) {
      while (frames.length && frames.at(-1)!.next >= frames.at(-1)!.items.length) frames.pop();
      if (!frames.length) return result;
      const frame = frames.at(-1)!;
      const key = frame.keys?.[frame.next];
      current = frame.items[frame.next++];
      if (key === undefined || !key.includes('\u0000')) break;
      result.nul.push(pathOf(frames.length - 1));
    }
  }
}

function makeValidator<T>(all: ValidateFunction, first: ValidateFunction, root: string, copy: boolean): Validator<T> {
  return (value: unknown) => {
    // Query objects are cached by Koa; Ajv coerces in place, so validate a copy.
    const input = copy && value && typeof value === 'object' ? { ...value } : value;
    const shape = inspectJson(input, root);
    if (shape.tooDeep) throw new ValidationError([{ path: shape.tooDeep, message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]);
    // Every error for ordinary bodies; for huge ones, the first (each error costs an object).
    const validate = shape.values > ALL_ERRORS_MAX_VALUES ? first : all;
    const errors = validate(input) ? [] : toFieldErrors(validate.errors, root);
    for (const path of shape.nul) errors.push({ path, message: 'must not contain the NUL character (U+0000)' });
    if (errors.length) throw new ValidationError(errors.slice(0, MAX_REPORTED_ERRORS));
    return input as T;
  };
}

export function compileBody<T>(schema: JsonSchema): Validator<T> {
  return makeValidator<T>(bodyAjv.compile(schema), firstErrorBodyAjv.compile(schema), 'body', false);
}

export function compileQuery<T>(schema: JsonSchema): Validator<T> {
  const validate = queryAjv.compile(schema);
  return makeValidator<T>(validate, validate, 'query', true);
}
