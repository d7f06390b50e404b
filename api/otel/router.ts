import type { Next } from 'koa';
import getRawBody from 'raw-body';
import { createGunzip } from 'node:zlib';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { AgentIngestRequest } from '../../src/domain/agent-ingest.js';
import { genAiLogSpans } from '../../src/domain/otel/genai-logs.js';
import { OtlpLimitError, OtlpShapeError, type OtlpLimits } from '../../src/domain/otel/model.js';
import { AppError } from '../../src/errors.js';
import { CodingTelemetry } from '../../src/otel/coding-telemetry.js';
import {
  decodedOf,
  decodeOtlp,
  encodeError,
  encodeExportResponse,
  encodingOf,
  type OtlpDecoded,
  type OtlpEncoding,
} from '../../src/otel/otlp-codec.js';
import { ingestSpans, summarize, type OtlpIngestOutcome } from '../../src/otel/ingest.js';
import type { AppContext, AppDeps } from '../context.js';
import { errorResponse } from '../middleware/errors.js';
import { rateLimited, withRateLimit } from '../middleware/rate-limit.js';
import type { RouteRegistry } from '../routes.js';
import {
  AGENT_SECRET_ERRORS,
  agentApplication,
  agentOf,
  agentSecret,
  withCurrentAuthority,
  type AgentIngestPath,
} from '../agent-conversations/auth.js';

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
          : error instanceof OtlpLimitError
            ? new AppError('otlp_export_too_large', {
                message: `Too large an OTLP export: ${error.message}. Send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE).`,
              })
            : error,
      );
      ctx.set(answer.headers);
      send(ctx, answer.status, encodeError(answer.status, answer.body, encodingFor(ctx)));
    }
  };
}

/** A gzipped body may inflate past its ratio only while it stays this small. */
const INFLATION_FLOOR_BYTES = 1024 * 1024;

/**
 * Passes the inflated bytes on while they stay within `ratio` times the compressed bytes read so far
 * (past INFLATION_FLOOR_BYTES): a gzip bomb is cut off as it inflates, not once it has.
 */
function inflationGuard(compressed: () => number, ratio: number): Transform {
  let inflated = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      if (inflated > INFLATION_FLOOR_BYTES && inflated > ratio * compressed())
        done(new OtlpLimitError(`its gzip inflates more than ${ratio} times (OTLP_MAX_INFLATION_RATIO)`));
      else done(null, chunk);
    },
  });
}

/** The body, gunzipped when sent so, at most `limit` bytes once decompressed (413 past it) and at most `ratio` times its gzipped size. */
async function readBody(ctx: AppContext, limit: number, ratio: number): Promise<Buffer> {
  if (!encodingOf(ctx.get('content-type')))
    throw new AppError('unsupported_media_type', {
      message: 'Send OTLP as application/x-protobuf or application/json.',
    });
  const contentEncoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  let stream: Readable = ctx.req;
  if (contentEncoding === 'gzip') {
    let compressed = 0;
    ctx.req.on('data', (chunk: Buffer) => (compressed += chunk.length));
    // pipeline, not pipe: a client that goes away mid-body ends the gunzip too (raw-body would wait on it).
    const guard = inflationGuard(() => compressed, ratio);
    pipeline(ctx.req, createGunzip(), guard, () => undefined);
    stream = guard;
  } else if (contentEncoding !== 'identity')
    throw new AppError('unsupported_media_type', { message: `Content-Encoding ${contentEncoding} is not supported: send gzip or none.` });
  try {
    return await getRawBody(stream, { limit });
  } catch (error) {
    if (error instanceof OtlpLimitError) throw error;
    const e = error as { type?: string; code?: string };
    if (e.type === 'entity.too.large')
      throw new AppError('payload_too_large', { message: `The request body exceeds ${limit} bytes (decompressed).` });
    if (e.code === 'ECONNRESET' || e.code === 'ERR_STREAM_PREMATURE_CLOSE') throw new AppError('request_aborted');
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR')
      throw new AppError('otlp_invalid_payload', { message: 'The body is not valid gzip.' });
    throw error;
  }
}

/** The agent events an OTLP export stored, counted as REST ingest's are. */
function countEvents(deps: AppDeps, outcome: OtlpIngestOutcome): void {
  for (const s of outcome.sessions) {
    deps.metrics.agentEvents.inc({ outcome: 'accepted' }, s.accepted);
    deps.metrics.agentEvents.inc({ outcome: 'deduplicated' }, s.deduplicated);
    deps.metrics.agentEvents.inc({ outcome: 'revised' }, s.revised);
  }
}

/** OTLP/HTTP receivers (issue 35): GenAI traces and events become agent sessions, through the REST ingest's path; Claude Code's events coding-agent sessions. */
export function otlpRoutes(deps: AppDeps, registry: RouteRegistry, { credentials, writer, limits }: AgentIngestPath): void {
  const coding = new CodingTelemetry(deps.pool);
  const { bodyLimitBytes: limit, maxInflationRatio: ratio } = deps.config.otlp;
  const exportLimits: OtlpLimits = {
    maxItems: deps.config.otlp.maxItems,
    maxAttributes: deps.config.otlp.maxAttributes,
    maxValues: deps.config.otlp.maxValues,
  };
  const threshold = deps.config.http.bodyWorkerThresholdBytes;
  /** The values an export decoded on the event loop may hold: a body of BODY_WORKER_THRESHOLD_BYTES at 16 bytes a value. */
  const onLoopValues = Math.max(1, Math.floor(threshold / 16));
  /**
   * A body past BODY_WORKER_THRESHOLD_BYTES, or one of many values in few bytes, is decoded and
   * classified in a body thread, off the event loop, as large JSON bodies are checked: only what
   * Intake keeps comes back.
   */
  const decode = (signal: 'traces' | 'logs', body: Buffer, encoding: OtlpEncoding): Promise<OtlpDecoded> | OtlpDecoded => {
    const view = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    if (!deps.bodyChecker) return decodeOtlp({ signal, body: view, encoding, limits: exportLimits });
    if (body.length <= threshold) {
      const here = decodeOtlp({ signal, body: view, encoding, limits: exportLimits, budget: onLoopValues });
      if (here.kind !== 'elsewhere') return here;
    }
    // Transferred, not copied, when the body has its memory to itself (it is no slice of a shared pool).
    const own = body.byteOffset === 0 && body.buffer.byteLength === body.length ? view : new Uint8Array(view);
    return deps.bodyChecker.decodeOtlp({ signal, body: own, encoding, limits: exportLimits });
  };

  /** Spans and log records a minute per organization: an export takes one per item it holds (429 past the limit). */
  const records = deps.rateLimits.limiter('otlp-records', deps.config.otlp.recordsPerMinute);
  const charge = async (ctx: AppContext, items: number): Promise<void> => {
    if (!records || items === 0) return;
    const decision = await records.consume(`org:${agentOf(ctx).application.organization_id}`, items);
    if (!decision.allowed) throw rateLimited(decision, 'spans and log records a minute (OTLP_RECORD_RATE_LIMIT_PER_MINUTE)');
  };

  /** One REST-shaped request with the request's credential (a stale cached lookup refreshed, as REST ingest does). */
  const writeWith = (ctx: AppContext) => (request: AgentIngestRequest) =>
    withCurrentAuthority(deps, credentials, ctx, request.agentKey, (authority) =>
      writer.ingest(authority, request, { placeSequences: true }),
    );

  const middleware = [otlpErrors(), agentSecret(deps, credentials), agentApplication(), ...limits];
  const responses = (what: string) =>
    withRateLimit(
      {
        200: { description: `Accepted: Export${what}ServiceResponse (partialSuccess when some were rejected)` },
        400: { description: 'Not an OTLP export request (google.rpc.Status)' },
        413: {
          description:
            'Over OTLP_BODY_LIMIT_BYTES once decompressed (`payload_too_large`), or more spans or records, attributes, values or gzip inflation than one export may hold (`otlp_export_too_large`)',
        },
        415: { description: 'Neither application/x-protobuf nor application/json, or an encoding other than gzip' },
      },
      "Over AGENT_INGEST_RATE_LIMIT_PER_MINUTE requests a minute for this organization (REST and OTLP ingest together), or over OTLP_RECORD_RATE_LIMIT_PER_MINUTE spans and log records a minute (then the RateLimit headers are that limit's)",
    );

  registry.add({
    method: 'post',
    path: `${OTLP_BASE}/v1/traces`,
    operationId: 'exportOtlpTraces',
    tags: ['opentelemetry'],
    summary: 'OTLP/HTTP trace export (X-Service-Agent-Key): GenAI spans become agent sessions',
    description:
      'An OpenTelemetry exporter with `OTEL_EXPORTER_OTLP_ENDPOINT=<base URL>/otel` and `OTEL_EXPORTER_OTLP_HEADERS=X-Service-Agent-Key=<ingest secret>` sends here, as `application/x-protobuf` or `application/json`, gzip or not. The body is an `ExportTraceServiceRequest`; the answer an `ExportTraceServiceResponse` in the same encoding, whose `partialSuccess` counts the spans rejected and says why. Spans without GenAI messages are accepted and not stored. Errors are a `google.rpc.Status` (in JSON with `errorCode`). The mapping: docs/guides/opentelemetry.md.',
    middleware,
    security: [{ agentKey: [] }],
    responses: responses('Trace'),
    errors: [...AGENT_SECRET_ERRORS],
    handler: async (ctx: AppContext) => {
      const encoding = encodingFor(ctx);
      const { spans, unusable, items } = decodedOf(await decode('traces', await readBody(ctx, limit, ratio), encoding), 'traces');
      await charge(ctx, items);
      const app = agentOf(ctx).application;
      const outcome = await ingestSpans(app.agent_key, spans, unusable, writeWith(ctx));
      countEvents(deps, outcome);
      deps.metrics.otlpSpans.inc({ outcome: 'rejected' }, outcome.rejected);
      deps.metrics.otlpSpans.inc({ outcome: 'ignored' }, outcome.ignored);
      deps.metrics.otlpSpans.inc({ outcome: 'stored' }, Math.max(0, spans.length + unusable.count - outcome.rejected - outcome.ignored));
      const notes = [...outcome.reasons];
      if (outcome.ignored) notes.push(`${outcome.ignored} span(s) without GenAI messages accepted and not stored`);
      const message = notes.join('; ');
      logRejections(ctx, app.id, 'spans', outcome.rejected, message);
      send(ctx, 200, encodeExportResponse('traces', { rejected: outcome.rejected, message }, encoding));
    },
  });

  registry.add({
    method: 'post',
    path: `${OTLP_BASE}/v1/logs`,
    operationId: 'exportOtlpLogs',
    tags: ['opentelemetry'],
    summary: 'OTLP/HTTP log export (X-Service-Agent-Key): GenAI events become agent sessions, Claude Code events coding-agent sessions',
    description:
      "The same exporter settings as for traces (`OTEL_EXPORTER_OTLP_ENDPOINT=<base URL>/otel`, or `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=<base URL>/otel/v1/logs`). The body is an `ExportLogsServiceRequest`; the answer an `ExportLogsServiceResponse` in the same encoding, whose `partialSuccess` counts the log records rejected and says why. GenAI events sent as log records (`gen_ai.user.message`, `gen_ai.choice`, `gen_ai.client.inference.operation.details`...) are read as the model call their trace and span ids name, into agent sessions; Claude Code's events (`claude_code.user_prompt`, `api_request`, `api_error`, `tool_result`, `tool_decision`) into the coding-agent session its `session.id` names, which the MCP tools list (`list-agent-sessions`) and associate with projects. Other records are accepted and not stored. The mapping: docs/guides/opentelemetry.md.",
    middleware,
    security: [{ agentKey: [] }],
    responses: responses('Logs'),
    errors: [...AGENT_SECRET_ERRORS],
    handler: async (ctx: AppContext) => {
      const encoding = encodingFor(ctx);
      const { claudeCode, genAi, other, items } = decodedOf(await decode('logs', await readBody(ctx, limit, ratio), encoding), 'logs');
      await charge(ctx, items);
      const app = agentOf(ctx).application;
      const notes: string[] = [];
      let rejected = 0;
      let ignored = other;
      if (genAi.length) {
        const { spans, unusable } = genAiLogSpans(genAi);
        const perSpan = new Map<string, number>();
        for (const r of genAi) if (r.spanId) perSpan.set(r.spanId, (perSpan.get(r.spanId) ?? 0) + 1);
        const outcome = await ingestSpans(app.agent_key, spans, unusable, writeWith(ctx), (id) => perSpan.get(id) ?? 1);
        countEvents(deps, outcome);
        rejected += outcome.rejected;
        notes.push(...outcome.reasons);
        // A span without messages stands for its records, all of them accepted and not stored.
        ignored += outcome.ignored;
      }
      if (claudeCode.length) {
        const outcome = await coding.records(app.id, claudeCode);
        rejected += outcome.rejected;
        ignored += outcome.ignored;
        notes.push(...outcome.reasons);
      }
      deps.metrics.otlpLogRecords.inc({ outcome: 'rejected' }, rejected);
      deps.metrics.otlpLogRecords.inc({ outcome: 'ignored' }, ignored);
      deps.metrics.otlpLogRecords.inc({ outcome: 'stored' }, Math.max(0, claudeCode.length + genAi.length + other - rejected - ignored));
      if (ignored) notes.push(`${ignored} record(s) neither GenAI messages nor Claude Code events Intake keeps: accepted and not stored`);
      const message = summarize(notes).join('; ');
      logRejections(ctx, app.id, 'log records', rejected, message);
      send(ctx, 200, encodeExportResponse('logs', { rejected, message }, encoding));
    },
  });
}

/**
 * An export answered 200 with rejections is said in the API's log too (issue 51): OTLP's
 * `partialSuccess` carries the count and the reasons, but SDKs do not all show it (Python's
 * exporter drops it), and the export then looks accepted from both ends.
 */
function logRejections(ctx: AppContext, applicationId: string, what: 'spans' | 'log records', rejected: number, reasons: string): void {
  if (rejected > 0) ctx.state.log.warn({ applicationId, rejected, reasons }, `OTLP export: ${rejected} ${what} rejected (partialSuccess)`);
}
