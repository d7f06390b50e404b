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

const STANDARD_ERRORS: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing, invalid, expired or revoked credentials',
  403: 'The credential may not perform this operation',
  404: 'Unknown or inaccessible resource',
  413: 'Request body too large',
  415: 'Body is not JSON',
  503: 'A dependency (PostgreSQL or Temporal) is unavailable; retry',
};

function queryParameters(schema: JsonSchema | undefined): unknown[] {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

function pathParameters(path: string): unknown[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

function operation(spec: AnyRouteSpec): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema ? { content: { 'application/json': { schema: withRefs(r.schema, false) } } } : {}),
      ...(r.headers
        ? { headers: Object.fromEntries(Object.entries(r.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) }
        : {}),
    };
  }
  const relevant = Object.keys(STANDARD_ERRORS)
    .map(Number)
    .filter((s) => {
      if (s === 401 || s === 403) return Boolean(spec.auth);
      if (s === 413 || s === 415) return Boolean(spec.body);
      if (s === 404) return spec.path.includes('{');
      return s === 400 ? Boolean(spec.body ?? spec.query) : true;
    });
  for (const status of relevant) {
    responses[status] ??= { description: STANDARD_ERRORS[status], content: { 'application/json': { schema: ERROR_REF } } };
  }
  const security = spec.security ?? (spec.auth ? spec.auth.accept.map((k) => (k === 'apiKey' ? { apiKey: [] } : { bearer: [] })) : []);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: spec.tags,
    security,
    parameters: [...pathParameters(spec.path), ...queryParameters(spec.query)],
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
    info: { title: 'Intake API', version: '3.0.0', description: 'Ingestion of feedback, agent conversations and recordings.' },
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
