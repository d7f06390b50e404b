import { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { CommonQueryMethods } from 'slonik';
import type { AppContext, AppDeps } from './context.js';
import { authenticate, type AuthRequirement } from './middleware/auth.js';
import { idempotent } from './middleware/idempotency.js';
import { jsonBody } from './json-body.js';
import type { BodyPrecheck } from './body-prechecks.js';
import { compileBody, compileQuery, type JsonSchema, type Validated } from './validation.js';
import type { ErrorKey } from '../src/errors.js';

export interface BodySpec<S = JsonSchema> {
  schema: S;
  limitBytes?: number;
  /** A body past the limit: 413 `payload_too_large` unless an area's contract says otherwise (a catalogue key). */
  tooLarge?: ErrorKey;
  /** A check before the schema, on either parsing path (body-prechecks.ts). */
  precheck?: BodyPrecheck;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteInput<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
  /**
   * What the handler's effect writes through: the pool, or, on an `idempotent` route's request with an
   * `Idempotency-Key`, the transaction in which the middleware also stores the response, so that the
   * effect and the key's completion commit together (a service that opens its own transaction on it
   * nests in this one).
   */
  db: CommonQueryMethods;
}

/**
 * A route generic over its body and query schemas (`as const` literals): the handler's input is
 * typed by what those schemas let through (`Validated<S>`), with no hand-written request types.
 */
export interface RouteSpec<BS = undefined, QS = undefined> {
  method: Method;
  /** OpenAPI style: `/v3/rest/users/{userId}`. */
  path: string;
  operationId: string;
  summary: string;
  /** Longer OpenAPI text (Markdown) when the summary is not enough. */
  description?: string;
  tags: string[];
  /** Absent: a public route (or one that authenticates in its own middleware, see `security`). */
  auth?: AuthRequirement;
  /** OpenAPI security requirements when the route authenticates by other means than `auth`. */
  security?: Record<string, string[]>[];
  /** Run after authentication, before the body is read (rate limits). */
  middleware?: Middleware<AppContext['state']>[];
  body?: BodySpec<BS>;
  /** Run after the body is parsed, before it is validated (a credential bound to a body field). */
  afterBody?: Middleware<AppContext['state']>[];
  query?: QS;
  /** `mediaType`: a body that is not JSON (an NDJSON stream), documented with `schema` under that media type. */
  responses: Record<number, { description: string; schema?: JsonSchema; headers?: Record<string, string>; mediaType?: string }>;
  /**
   * The errors the route answers with besides the standard ones (openapi.ts adds those from `auth`,
   * `body`, `query` and path parameters): catalogue keys, grouped by status into the OpenAPI error
   * responses. A status also in `responses` keeps that entry (a special body, such as a recovery 409).
   */
  errors?: readonly ErrorKey[];
  /**
   * Accepts an `Idempotency-Key` header (a POST without a natural key): the first response is replayed
   * for 24 hours to the same key, credential and request (api/middleware/idempotency.ts). Needs `auth`.
   */
  idempotent?: boolean;
  handler: (ctx: AppContext, input: RouteInput<Validated<BS>, Validated<QS>>) => Promise<void>;
}

/** A route as the registry keeps it, whatever its schemas. */
export type AnyRouteSpec = RouteSpec<JsonSchema, JsonSchema>;

/** Routes are defined once: the same spec mounts the Koa route and feeds the OpenAPI document. */
export class RouteRegistry {
  readonly specs: AnyRouteSpec[] = [];
  readonly router = new Router<AppContext['state']>();

  constructor(private readonly deps: AppDeps) {}

  add<const BS extends JsonSchema | undefined = undefined, const QS extends JsonSchema | undefined = undefined>(
    spec: RouteSpec<BS, QS>,
  ): void {
    this.specs.push(spec as unknown as AnyRouteSpec);
    const middleware: Middleware<AppContext['state']>[] = [];
    if (spec.auth) middleware.push(authenticate(this.deps, spec.auth));
    middleware.push(...(spec.middleware ?? []));
    const validateBody = spec.body ? compileBody<unknown>(spec.body.schema as JsonSchema) : null;
    const validateQuery = spec.query ? compileQuery<unknown>(spec.query) : null;
    if (spec.body) {
      middleware.push(
        jsonBody({
          key: spec.operationId,
          schema: spec.body.schema as JsonSchema,
          limitBytes: spec.body.limitBytes ?? this.deps.config.http.bodyLimitBytes,
          tooLarge: spec.body.tooLarge,
          checker: this.deps.bodyChecker,
          offloadAbove: this.deps.config.http.bodyWorkerThresholdBytes,
          precheck: spec.body.precheck,
        }),
      );
    }
    middleware.push(...(spec.afterBody ?? []));
    if (spec.idempotent && !spec.auth)
      throw new Error(`${spec.operationId}: an idempotent route needs \`auth\` (keys belong to a credential)`);
    const idempotency = spec.idempotent ? idempotent(this.deps) : null;
    middleware.push(async (ctx: AppContext) => {
      const input: Omit<RouteInput<unknown, unknown>, 'db'> = {
        // A body a thread checked is valid already (see json-body.ts).
        body: validateBody && !ctx.state.bodyChecked ? validateBody(ctx.request.body) : ctx.request.body,
        query: validateQuery ? validateQuery(ctx.query) : undefined,
        params: (ctx as unknown as { params: Record<string, string> }).params,
      };
      // The validators return what the schemas describe, which is what the handler's input type says.
      const handle = (db: CommonQueryMethods) =>
        (spec.handler as (ctx: AppContext, input: RouteInput<unknown, unknown>) => Promise<void>)(ctx, { ...input, db });
      // Inside the validation: a request refused before its handler began stores nothing.
      await (idempotency ? idempotency(ctx, handle) : handle(this.deps.pool));
    });
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    this.router[spec.method](spec.operationId, koaPath, ...middleware);
  }
}
