import type { AgentIngestRequest, JsonValue } from '../agent-ingest.js';
import { findSecrets, redact, type Redaction } from './mask-secrets.js';

/**
 * Sanitizing of agent chat ingestion (application settings "Redacted field names" and "Redacted
 * text patterns", plus built-in secret masking). Everything is sanitized before it is stored or
 * compared, so the output depends only on the input and the settings.
 */
export interface SanitizeSettings {
  readonly redactedFieldNames: readonly string[];
  readonly redactedTextPatterns: readonly string[];
}

export const REDACTED_TEXT = '[REDACTED]';
export const SECRET_FIELD_MASK = '[REDACTED:secret_field]';

/** Keys whose values are secrets whatever they hold (compared normalized, as suffixes). */
const SECRET_FIELD_SUFFIXES = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'accesskey',
  'secretkey',
  'privatekey',
  'signingkey',
  'encryptionkey',
  'credential',
  'credentials',
  'authorization',
  'cookie',
];

interface Rules {
  readonly removedFields: ReadonlySet<string>;
  /** Configured exact texts, longest first, as one alternation: one pass, no re-matching inside a replacement. */
  readonly textPattern: RegExp | undefined;
}

/** `apiKey`, `api_key`, `API-KEY` and `api key` are the same field name. */
export function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, '');
}

/**
 * Keys repeat across the events of a request and across requests (`provider`, `inputTokens`): their
 * verdicts are kept, up to a bound, so that a flood of distinct keys cannot grow it.
 */
const SECRET_NAME_VERDICTS = new Map<string, boolean>();
const MAX_KEPT_VERDICTS = 10_000;

export function isSecretFieldName(name: string): boolean {
  const kept = SECRET_NAME_VERDICTS.get(name);
  if (kept !== undefined) return kept;
  const normalized = normalizeFieldName(name);
  const verdict = SECRET_FIELD_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
  if (SECRET_NAME_VERDICTS.size < MAX_KEPT_VERDICTS) SECRET_NAME_VERDICTS.set(name, verdict);
  return verdict;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

function compile(settings: SanitizeSettings): Rules {
  const literals = [...new Set(settings.redactedTextPatterns.filter((p) => p.length > 0))].sort(
    (a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0),
  );
  return {
    removedFields: new Set(settings.redactedFieldNames.map(normalizeFieldName).filter((n) => n.length > 0)),
    textPattern: literals.length > 0 ? new RegExp(literals.map(escapeRegExp).join('|'), 'g') : undefined,
  };
}

/**
 * Configured texts and secrets are both found in the original text, then replaced together:
 * replacing configured texts first could hide a secret from its detector (a configured
 * `password` would turn `password=hunter22` into `[REDACTED]=hunter22`).
 */
function maskText(text: string, rules: Rules): string {
  const configured: Redaction[] = [];
  for (const match of rules.textPattern ? text.matchAll(rules.textPattern) : []) {
    configured.push({ start: match.index, end: match.index + match[0].length, replacement: REDACTED_TEXT, priority: -1 });
  }
  const secrets = findSecrets(text);
  return configured.length + secrets.length === 0 ? text : redact(text, [...configured, ...secrets]);
}

/** Input is Ajv-validated JSON; `unknown` because the request walk below shares this code. */
function maskJson(value: unknown, rules: Rules): unknown {
  if (typeof value === 'string') return maskText(value, rules);
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) items.push(maskJson(item, rules));
    return items;
  }
  if (value !== null && typeof value === 'object') return maskObject(value, undefined, rules);
  return value;
}

// ---- The request's shape: structural fields are kept; keys not listed are generic JSON. ----

interface FieldSpec {
  /** Whether a configured field name removes it; structural fields are never removed. */
  readonly removable: boolean;
  readonly apply: (value: unknown, rules: Rules) => unknown;
}
type Shape = ReadonlyMap<string, FieldSpec>;

const keep: FieldSpec = { removable: false, apply: (value) => value };
const keepUnlessRemoved: FieldSpec = { removable: true, apply: (value) => value };
const fixedJson: FieldSpec = { removable: false, apply: maskJson };
/** A container that holds structural fields: kept, its own keys sanitized by `shape`. */
const nested = (shape: Shape): FieldSpec => ({ removable: false, apply: (value, rules) => maskShaped(value, shape, rules) });
const listOf = (shape: Shape): FieldSpec => ({
  removable: false,
  apply: (value, rules) => {
    if (!Array.isArray(value)) return maskJson(value, rules);
    const items: unknown[] = [];
    for (const item of value) items.push(maskShaped(item, shape, rules));
    return items;
  },
});

/**
 * Spec: "matching keys are removed from ... feedback, ... context and participant identity fields".
 * So every key of these is removable; what the ingest checks with them (the allowed environment,
 * a feedback target, a participant reference) it checks on the request as sent, before they go.
 */
const maskedUnlessRemoved: FieldSpec = { removable: true, apply: maskJson };
const CONTEXT = new Map<string, FieldSpec>([['environment', keepUnlessRemoved]]); // compared verbatim with the allowed list
const SOURCE = new Map<string, FieldSpec>([
  ['sdk', fixedJson],
  ['version', fixedJson],
]);
const FEEDBACK = new Map<string, FieldSpec>([
  ['targetEventExternalId', keepUnlessRemoved],
  ['rating', keepUnlessRemoved],
]);
const PARTICIPANT = new Map<string, FieldSpec>([
  ...['externalId', 'personId', 'ownerUserId', 'boundary'].map((key): [string, FieldSpec] => [key, keepUnlessRemoved]),
  ['companyExternalId', maskedUnlessRemoved], // free text an integrator chose: configured texts are replaced in it too
]);
const EVENT = new Map<string, FieldSpec>([
  ...['externalEventId', 'sequence', 'revision', 'occurredAt', 'type', 'participantExternalId', 'final'].map((key): [string, FieldSpec] => [
    key,
    keep,
  ]),
  ['feedback', nested(FEEDBACK)],
  ['context', nested(CONTEXT)],
]);
const REQUEST = new Map<string, FieldSpec>([
  ['agentKey', keep],
  ['externalSessionId', keep],
  ['status', keep],
  ['agentVersion', fixedJson],
  ['source', nested(SOURCE)],
  ['context', nested(CONTEXT)],
  ['participants', listOf(PARTICIPANT)],
  ['events', listOf(EVENT)],
]);

/** The shapes by where they apply in the request: a unit test checks their keys against the ingest schema. */
export const INGEST_SHAPES: Readonly<Record<'request' | 'source' | 'context' | 'participant' | 'event' | 'feedback', Shape>> = {
  request: REQUEST,
  source: SOURCE,
  context: CONTEXT,
  participant: PARTICIPANT,
  event: EVENT,
  feedback: FEEDBACK,
};

function maskShaped(value: unknown, shape: Shape, rules: Rules): unknown {
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  return isObject ? maskObject(value, shape, rules) : maskJson(value, rules);
}

/**
 * Keys not in `shape` (all keys of plain JSON) are removed when configured, masked whole when
 * secret-named, else sanitized recursively. Key order is kept; `Object.fromEntries` also keeps a
 * `__proto__` key a plain key.
 */
function maskObject(value: object, shape: Shape | undefined, rules: Rules): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const spec = shape?.get(key);
    if (member === undefined) continue;
    if ((spec?.removable ?? true) && rules.removedFields.size > 0 && rules.removedFields.has(normalizeFieldName(key))) continue;
    if (spec) entries.push([key, spec.apply(member, rules)]);
    else entries.push([key, isSecretFieldName(key) ? SECRET_FIELD_MASK : maskJson(member, rules)]);
  }
  return Object.fromEntries(entries);
}

/** Configured exact texts become `[REDACTED]` (longest first, literally) and secrets `[REDACTED:<kind>]`. */
export function sanitizeText(text: string, settings: SanitizeSettings): string {
  return maskText(text, compile(settings));
}

export function sanitizeValue(value: JsonValue, settings: SanitizeSettings): JsonValue {
  return maskJson(value, compile(settings)) as JsonValue;
}

/** A new request of the same shape; the input is not modified. */
export function sanitizeIngestRequest(request: AgentIngestRequest, settings: SanitizeSettings): AgentIngestRequest {
  return maskObject(request, REQUEST, compile(settings)) as unknown as AgentIngestRequest;
}
