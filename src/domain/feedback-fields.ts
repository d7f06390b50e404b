import type { FieldError } from '../errors.js';

/** The spec's field categories and types (feedback records; recording metadata fields reuse the types). */
export const FIELD_CATEGORIES = ['content', 'created_at', 'identifier', 'identity', 'metadata'] as const;
export const FIELD_TYPES = ['boolean', 'date', 'datetime', 'float', 'integer', 'json', 'string'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * Limit of the spec: 10 KB per field value, measured on the value: a string's UTF-8 bytes (its
 * quotes and escapes are JSON's, not the value's), any other value's JSON text.
 */
export const MAX_VALUE_BYTES = 10 * 1024;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** An ISO 8601 instant: date, time and an explicit offset (a time without a zone is ambiguous). */
export function isInstant(value: string): boolean {
  if (!DATETIME.test(value)) return false;
  return isCalendarDate(value.slice(0, 10)) && !Number.isNaN(Date.parse(value));
}

/** Why a value does not match its declared type, or null when it does. */
export function valueMismatch(type: FieldType, value: unknown): string | null {
  switch (type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean for type boolean';
    case 'string':
      return typeof value === 'string' ? null : 'must be a string for type string';
    case 'integer':
      return Number.isSafeInteger(value) ? null : 'must be a safe integer for type integer';
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a finite number for type float';
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? null : 'must be a calendar date (YYYY-MM-DD) for type date';
    case 'datetime':
      return typeof value === 'string' && isInstant(value) ? null : 'must be an ISO 8601 date-time with an offset for type datetime';
    case 'json':
      return value === undefined ? 'is required' : null;
  }
}

export interface FieldInput {
  category: string;
  type: FieldType;
  name: string;
  value: unknown;
}

function valueBytes(value: unknown): number {
  return Buffer.byteLength(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 'utf8');
}

/** Checks what JSON Schema cannot say: value against type, and the value's size. */
export function checkFieldValues(fields: readonly FieldInput[], root = 'body.fields'): FieldError[] {
  const errors: FieldError[] = [];
  fields.forEach((field, i) => {
    const path = `${root}.${i}.value`;
    const mismatch = valueMismatch(field.type, field.value);
    if (mismatch) errors.push({ path, message: mismatch });
    const bytes = valueBytes(field.value);
    if (bytes > MAX_VALUE_BYTES) errors.push({ path, message: `must be at most ${MAX_VALUE_BYTES} bytes (got ${bytes})` });
  });
  return errors;
}
