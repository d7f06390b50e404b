import { Ajv2020, type ErrorObject, type Options } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { isUuid } from '../db/uuid.js';

/**
 * RFC 3339 date-times that can also be stored: JavaScript must read them (a leap second `:60` cannot
 * be) and PostgreSQL must hold them (no year 0000). Timestamps reach the database as UTC instants.
 */
const rfc3339 = fullFormats['date-time'] as { validate: (s: string) => boolean };
/** The instant's UTC year, which is what is stored: `9999-12-31T23:59:59-23:59` is in year 10000. */
function storableDateTime(s: string): boolean {
  if (!rfc3339.validate(s)) return false;
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) return false;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/**
 * An Ajv (JSON Schema 2020-12, strict) with the house's formats: ajv-formats', except `date-time`
 * (storable instants only) and `uuid` (ajv-formats' also takes `urn:uuid:<uuid>`, which PostgreSQL's
 * uuid type refuses: ids are the bare 36-character form only, as `isUuid` checks path parameters).
 * Every schema this service validates with (REST bodies and queries, export and import lines) is
 * compiled by one of these.
 */
export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, ...options });
  addFormatsPlugin.default(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: storableDateTime });
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  return ajv;
}

/** Where an error is, as a dotted path below the validated value (`a.b.0.c`; '' for the value itself). */
export function errorPath(error: ErrorObject): string {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const extra = params.missingProperty ?? params.additionalProperty;
  if (extra !== undefined) return base ? `${base}.${extra}` : extra;
  return base;
}

/** What is wrong, in words an integrator reads. */
export function errorMessage(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string; allowedValues?: unknown[] };
  if (error.keyword === 'additionalProperties') return `unknown property '${params.additionalProperty}'`;
  if (error.keyword === 'enum') return `must be one of: ${(params.allowedValues ?? []).join(', ')}`;
  return error.message ?? 'is invalid';
}
