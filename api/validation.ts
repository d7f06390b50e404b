import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { ValidationError, type FieldError } from '../src/errors.js';

export type JsonSchema = Record<string, unknown>;

/**
 * One Ajv instance for JSON bodies (strict, every error reported, unknown keys rejected by the
 * schemas' `additionalProperties: false`) and one for query strings, where every value arrives as
 * a string: it coerces types and fills defaults. Schemas are compiled once, when a route is defined.
 */
const bodyAjv = new Ajv2020({ strict: true, allErrors: true, useDefaults: true });
const queryAjv = new Ajv2020({ strict: true, allErrors: true, useDefaults: true, coerceTypes: 'array' });
addFormatsPlugin.default(bodyAjv);
addFormatsPlugin.default(queryAjv);

/**
 * RFC 3339 date-times that can also be stored: JavaScript must read them (a leap second `:60` cannot
 * be) and PostgreSQL must hold them (no year 0000). Timestamps reach the database as UTC instants.
 */
const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };
const storableDateTime = (s: string) => rfc3339.validate(s) && Number.isFinite(Date.parse(s)) && Number(s.slice(0, 4)) >= 1;
bodyAjv.addFormat('date-time', { type: 'string', validate: storableDateTime });
queryAjv.addFormat('date-time', { type: 'string', validate: storableDateTime });

export type Validator<T> = (value: unknown) => T;

function toPath(error: ErrorObject): string {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const extra = params.missingProperty ?? params.additionalProperty;
  if (extra !== undefined) return base ? `${base}.${extra}` : extra;
  return base;
}

function toMessage(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string; allowedValues?: unknown[] };
  if (error.keyword === 'additionalProperties') return `unknown property '${params.additionalProperty}'`;
  if (error.keyword === 'enum') return `must be one of: ${(params.allowedValues ?? []).join(', ')}`;
  return error.message ?? 'is invalid';
}

export function toFieldErrors(errors: ErrorObject[] | null | undefined, root: string): FieldError[] {
  return (errors ?? []).map((e) => {
    const path = toPath(e);
    return { path: path ? `${root}.${path}` : root, message: toMessage(e) };
  });
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000: a NUL anywhere in a string or a key of the input is
 * a 400 for every route, instead of a database error on the way in.
 */
export function nulPaths(value: unknown, path: string, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => nulPaths(item, `${path}.${i}`, found));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push(path);
      else nulPaths(item, `${path}.${key}`, found);
    }
  }
  return found;
}

function makeValidator<T>(validate: ValidateFunction, root: string, copy: boolean): Validator<T> {
  return (value: unknown) => {
    // Query objects are cached by Koa; Ajv coerces in place, so validate a copy.
    const input = copy && value && typeof value === 'object' ? { ...value } : value;
    const errors = validate(input) ? [] : toFieldErrors(validate.errors, root);
    for (const path of nulPaths(input, root)) errors.push({ path, message: 'must not contain the NUL character (U+0000)' });
    if (errors.length) throw new ValidationError(errors);
    return input as T;
  };
}

export function compileBody<T>(schema: JsonSchema): Validator<T> {
  return makeValidator<T>(bodyAjv.compile(schema), 'body', false);
}

export function compileQuery<T>(schema: JsonSchema): Validator<T> {
  return makeValidator<T>(queryAjv.compile(schema), 'query', true);
}
