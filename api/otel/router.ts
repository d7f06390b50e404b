import type { Next } from 'koa';
import getRawBody from 'raw-body';
import { createGunzip } from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import { AgentIngestWriter, INGEST_BATCHING } from '../../src/agents/ingest.js';
import { CredentialCache } from '../../src/agents/credential-cache.js';
import type { AgentIngestRequest } from '../../src/domain/agent-ingest.js';
import { OtlpShapeError } from '../../src/domain/otel/model.js';
import { AppError } from '../../src/errors.js';
import { decodeTraces, encodeError, encodeTracesResponse, encodingOf, type OtlpEncoding } from '../../src/otel/otlp-codec.js';
import { OtlpIngest } from '../../src/otel/ingest.js';
import type { AppContext, AppDeps } from '../context.js';
import { errorResponse } from '../middleware/errors.js';
import { rateLimit, withRateLimit } from '../middleware/rate-limit.js';
import type { RouteRegistry } from '../routes.js';
import { AGENT_SECRET_ERRORS, agentApplication, agentOf, agentSecret, withCurrentAuthority } from '../agent-conversations/auth.js';

/** Where OTLP exporters send: `OTEL_EXPORTER_OTLP_ENDPOINT=<base URL>/otel` appends `/v1/traces`. */
export const OTLP_BASE = '/otel';

/** The request's encoding, known before anything else so that every answer, errors included, is in it. */
function encodingFor(ctx: AppContext): OtlpEncoding {
  return ctx.state.otlpEncoding ?? 'json';
}

function send(ctx: AppContext, status: number, body: Buffer | Record<string, unknown>): void {
  ctx.status = status;
  if (Buffer.isBuffer(body)) ctx.type = 'application/x-protobuf';
  ctx.body = body;
}

/**
 * Every answer of an OTLP route in OTLP's shapes: errors as a `Status` in the request's encoding (in
 * JSON with Intake's `errorCode` beside `code` and `message`), a 5xx without internals.
 */
function otlpErrors() {
  return async (ctx: AppContext, next: Next) => {
    ctx.state.otlpEncoding = encodingOf(ctx.get('content-type')) ?? 'json';
    try {
      await next();
    } catch (error) {
      const answer = errorResponse(
        ctx,
        error instanceof OtlpShapeError
          ? new AppError('otlp_invalid_payload', { message: `Not an OTLP export request: ${error.message}.` })
          : error,
      );
      ctx.set(answer.headers);
      send(ctx, answer.status, encodeError(answer.status, answer.body, encodingFor(ctx)));
    }
  };
}

/** The body, gunzipped when sent so, at most `limit` bytes once decompressed (413 past it). */
async function readBody(ctx: AppContext, limit: number): Promise<Buffer> {
  if (!encodingOf(ctx.get('content-type')))
    throw new AppError('unsupported_media_type', {
      message: 'Send OTLP as application/x-protobuf or application/json.',
    });
  const contentEncoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  let stream: Readable = ctx.req;
  if (contentEncoding === 'gzip') {
    // pipeline, not pipe: a client that goes away mid-body ends the gunzip too (raw-body would wait on it).
    const gunzip = createGunzip();
    pipeline(ctx.req, gunzip, () => undefined);
    stream = gunzip;
  } else if (contentEncoding !== 'identity')
    throw new AppError('unsupported_media_type', { message: `Content-Encoding ${contentEncoding} is not supported: send gzip or none.` });
  try {
    return await getRawBody(stream, { limit });
  } catch (error) {
    const e = error as { type?: string; code?: string };
    if (e.type === 'entity.too.large')
      throw new AppError('payload_too_large', { message: `The request body exceeds ${limit} bytes (decompressed).` });
    if (e.code === 'ECONNRESET' || e.code === 'ERR_STREAM_PREMATURE_CLOSE') throw new AppError('request_aborted');
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR')
      throw new AppError('otlp_invalid_payload', { message: 'The body is not valid gzip.' });
    throw error;
  }
}

/** OTLP/HTTP receivers (issue 35): GenAI traces become agent sessions, through the REST ingest's path. */
export function otlpRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const credentials = new CredentialCache(deps.config.agents.credentialCacheSeconds);
  const writer = new AgentIngestWriter(deps.pool, { analysisCreditCost: deps.config.agents.analysisCreditCost, ...INGEST_BATCHING });
  const otlp = new OtlpIngest(deps.pool);
  // The same budget as REST ingest, per organization: the two share the limiter's rows.
  const limiter = deps.rateLimits.limiter('agent-ingest', deps.config.rateLimits.agentIngestPerMinute, { lease: 50 });
  const limits = limiter ? [rateLimit(limiter, (ctx) => `org:${agentOf(ctx).application.organization_id}`)] : [];
  const limit = deps.config.otlp.bodyLimitBytes;

  /** One REST-shaped request with the request's credential (a stale cached lookup refreshed, as REST ingest does). */
  const writeWith = (ctx: AppContext) => (request: AgentIngestRequest) =>
    withCurrentAuthority(deps, credentials, ctx, request.agentKey, (authority) => writer.ingest(authority, request));

  registry.add({
    method: 'post',
    path: `${OTLP_BASE}/v1/traces`,
    operationId: 'exportOtlpTraces',
    tags: ['opentelemetry'],
    summary: 'OTLP/HTTP trace export (X-Service-Agent-Key): GenAI spans become agent sessions',
    description:
      'An OpenTelemetry exporter with `OTEL_EXPORTER_OTLP_ENDPOINT=<base URL>/otel` and `OTEL_EXPORTER_OTLP_HEADERS=X-Service-Agent-Key=<ingest secret>` sends here, as `application/x-protobuf` or `application/json`, gzip or not. The body is an `ExportTraceServiceRequest`; the answer an `ExportTraceServiceResponse` in the same encoding, whose `partialSuccess` counts the spans rejected and says why. Spans without GenAI messages are accepted and not stored. Errors are a `google.rpc.Status` (in JSON with `errorCode`). The mapping: docs/guides/opentelemetry.md.',
    middleware: [otlpErrors(), agentSecret(deps, credentials), agentApplication(), ...limits],
    security: [{ agentKey: [] }],
    responses: withRateLimit(
      {
        200: { description: 'Accepted: ExportTraceServiceResponse (partialSuccess when spans were rejected)' },
        400: { description: 'Not an OTLP export request (google.rpc.Status)' },
        413: { description: 'Over OTLP_BODY_LIMIT_BYTES once decompressed' },
        415: { description: 'Neither application/x-protobuf nor application/json, or an encoding other than gzip' },
      },
      'Over AGENT_INGEST_RATE_LIMIT_PER_MINUTE requests a minute for this organization (REST and OTLP ingest together)',
    ),
    errors: [...AGENT_SECRET_ERRORS],
    handler: async (ctx: AppContext) => {
      const encoding = encodingFor(ctx);
      const { spans, unusable } = decodeTraces(await readBody(ctx, limit), encoding);
      const app = agentOf(ctx).application;
      const outcome = await otlp.spans({ id: app.id, agentKey: app.agent_key }, spans, unusable, writeWith(ctx));
      for (const s of outcome.sessions) {
        deps.metrics.agentEvents.inc({ outcome: 'accepted' }, s.accepted);
        deps.metrics.agentEvents.inc({ outcome: 'deduplicated' }, s.deduplicated);
        deps.metrics.agentEvents.inc({ outcome: 'revised' }, s.revised);
      }
      deps.metrics.otlpSpans.inc({ outcome: 'rejected' }, outcome.rejected);
      deps.metrics.otlpSpans.inc({ outcome: 'ignored' }, outcome.ignored);
      deps.metrics.otlpSpans.inc({ outcome: 'stored' }, Math.max(0, spans.length + unusable.count - outcome.rejected - outcome.ignored));
      const notes = [...outcome.reasons];
      if (outcome.ignored) notes.push(`${outcome.ignored} span(s) without GenAI messages accepted and not stored`);
      send(ctx, 200, encodeTracesResponse({ rejected: outcome.rejected, message: notes.join('; ') }, encoding));
    },
  });
}
