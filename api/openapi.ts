import { packageVersion } from '../src/paths.js';
import { ERROR_CATALOGUE, errorCodeOf, type ErrorKey } from '../src/errors.js';
import { NAMED_SCHEMAS, type NamedSchema } from './components.js';
import type { AnyRouteSpec } from './routes.js';
import type { JsonSchema } from './validation.js';

export const ERROR_REF: JsonSchema = { $ref: '#/components/schemas/Error' };

/** Open: an error carries details of its own next to these (`recordingId`, `id`, ...). */
export const errorSchema: JsonSchema = {
  type: 'object',
  description: 'An error: a human-readable message and a stable errorCode; a 400 lists the invalid fields in errors',
  required: ['message', 'errorCode'],
  properties: {
    message: { type: 'string' },
    errorCode: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const COMPONENTS: Record<string, NamedSchema> = {
  Error: {
    schema: errorSchema,
    example: {
      message: 'The request is invalid.',
      errorCode: 'validation_failed',
      errors: [{ path: 'body.name', message: 'must NOT have fewer than 1 characters' }],
    },
  },
  ...NAMED_SCHEMAS,
};
const NAME_OF = new Map<unknown, string>(Object.entries(COMPONENTS).map(([name, c]) => [c.schema, name]));

/** The schema with every part that is a named component (the very object) written as a `$ref` to it. */
function withRefs(schema: unknown, root = true): unknown {
  const name = root ? undefined : NAME_OF.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s, false));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withRefs(v, false)]));
}

/** The errors every route of its kind can answer with, whatever its own `errors` list. */
export function standardErrors(spec: AnyRouteSpec): ErrorKey[] {
  const keys: ErrorKey[] = [];
  if (spec.body ?? spec.query) keys.push('validation_failed');
  if (spec.body) keys.push('malformed_json', spec.body.tooLarge ?? 'payload_too_large', 'unsupported_media_type', 'server_busy');
  if (spec.auth) {
    keys.push('unauthenticated', 'invalid_credentials', 'token_expired', 'credential_revoked');
    if (spec.auth.forbid?.length) keys.push('principal_not_allowed');
    if (spec.auth.scope) keys.push('insufficient_scope');
  }
  if (spec.path.includes('{') || spec.auth?.unknownUserNotFound) keys.push('not_found');
  // A rate-limited route documents its 429 (withRateLimit, with the RateLimit headers).
  if (spec.responses[429]) keys.push('rate_limited');
  if (spec.idempotent) keys.push('idempotency_key_invalid', 'idempotency_key_in_progress', 'idempotency_key_reused');
  keys.push('database_unavailable', 'temporal_unavailable');
  return keys;
}

/**
 * A route's error responses, generated from the catalogue: one per status, its description listing
 * each errorCode with its message, its schema the Error component with errorCode narrowed to them.
 */
export function errorResponses(spec: AnyRouteSpec): Record<string, { description: string; content: unknown }> {
  const byStatus = new Map<number, Set<ErrorKey>>();
  for (const key of [...standardErrors(spec), ...(spec.errors ?? [])]) {
    const status = ERROR_CATALOGUE[key].status;
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(key));
  }
  const responses: Record<string, { description: string; content: unknown }> = {};
  for (const [status, keys] of [...byStatus].sort(([a], [b]) => a - b)) {
    const codes = [...new Set([...keys].map(errorCodeOf))];
    responses[status] = {
      description: [...keys].map((k) => `\`${errorCodeOf(k)}\`: ${ERROR_CATALOGUE[k].message}`).join('\n\n'),
      content: { 'application/json': { schema: { allOf: [ERROR_REF, { properties: { errorCode: { enum: codes } } }] } } },
    };
  }
  return responses;
}

function queryParameters(schema: JsonSchema | undefined): unknown[] {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

function pathParameters(path: string): unknown[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

/** The header an idempotent route accepts (docs/guides/idempotency.md). */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A unique key (such as a UUID v4) that makes a retry of this request safe: for 24 hours the same key with the same credential and request replays the first response (with `Idempotent-Replayed: true`) instead of acting again; with another request it is 422 `idempotency_key_reused`; while the first is still running, 409 `idempotency_key_in_progress`. 5xx responses are not stored.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description: '`true` when this response is the stored response of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

function operation(spec: AnyRouteSpec): Record<string, unknown> {
  const generated = errorResponses(spec);
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    // An entry with the plain Error schema is a note on the generated response; another schema (a
    // special body, such as a recovery 409) replaces it.
    const errors = r.schema === ERROR_REF ? generated[status] : undefined;
    responses[status] = {
      description: errors ? `${r.description}\n\n${errors.description}` : r.description,
      ...(errors
        ? { content: errors.content }
        : r.schema
          ? { content: { [r.mediaType ?? 'application/json']: { schema: withRefs(r.schema, false) } } }
          : {}),
      ...(r.headers
        ? { headers: Object.fromEntries(Object.entries(r.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) }
        : {}),
    };
  }
  for (const [status, response] of Object.entries(generated)) responses[status] ??= response;
  if (spec.idempotent) {
    // Documented on the successes; a handler's own 4xx (a 404, a 409) is replayed with it too.
    for (const [status, response] of Object.entries(responses) as [string, { headers?: object }][]) {
      if (status.startsWith('2')) response.headers = { ...response.headers, ...REPLAYED_HEADER };
    }
  }
  const security = spec.security ?? (spec.auth ? spec.auth.accept.map((k) => (k === 'apiKey' ? { apiKey: [] } : { bearer: [] })) : []);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags,
    security,
    parameters: [...pathParameters(spec.path), ...queryParameters(spec.query), ...(spec.idempotent ? [IDEMPOTENCY_PARAMETER] : [])],
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body.schema } } } } : {}),
    responses,
  };
}

/** OpenAPI 3.1, assembled from the very schemas Ajv compiles for validation. */
export function buildOpenApi(specs: readonly AnyRouteSpec[], serverUrl: string | undefined): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) (paths[spec.path] ??= {})[spec.method] = operation(spec);
  return {
    openapi: '3.1.0',
    info: { title: 'Intake API', version: packageVersion(), description: 'Ingestion of feedback, agent conversations and recordings.' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: serverUrl ? [{ url: serverUrl }] : [],
    paths,
    components: {
      schemas: Object.fromEntries(
        Object.entries(COMPONENTS).map(([name, c]) => [name, { ...(withRefs(c.schema) as object), examples: [c.example] }]),
      ),
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        agentKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Agent-Key',
          description: 'Agent ingest secret (agent chat ingest only)',
        },
        operatorToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Operator-Token',
          description: 'The operator credential (OPERATOR_TOKEN): operator routes only',
        },
      },
    },
  };
}
