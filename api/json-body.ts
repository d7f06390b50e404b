import { bodyParser } from '@koa/bodyparser';
import type { Middleware, Next } from 'koa';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError, ServerBusyError, SessionParseTimeoutError, type ErrorKey } from '../src/errors.js';
import type { SessionOutcome, SessionTask } from '../src/mcp/read-session.js';
import type { OtlpDecodeTask, OtlpDecoded } from '../src/otel/otlp-codec.js';
import type { BodyOutcome, BodyTask, SessionThreadTask } from './body-worker.js';
import { BODY_PRECHECKS, type BodyPrecheck } from './body-prechecks.js';
import type { AppContext } from './context.js';
import { parseJsonText } from './json-text.js';
import type { JsonSchema } from './validation.js';

/**
 * JSON request bodies. Small ones are parsed and validated on the event loop; a body larger than
 * BODY_WORKER_THRESHOLD_BYTES is parsed, walked and validated in a worker thread (piscina), so that a
 * hostile 16 MiB body costs other requests nothing but a share of the CPU. The thread answers with
 * the error, or the checked body as JSON text, which the event loop parses natively.
 */

export interface BodyChecker {
  check(task: BodyTask): Promise<BodyOutcome>;
  /** Reads an MCP session upload; past the time budget the thread is stopped: `session_parse_timeout`. */
  readSession(task: SessionTask): Promise<SessionOutcome>;
  /** Decodes an OTLP export (its body is transferred to the thread). */
  decodeOtlp(task: OtlpDecodeTask): Promise<OtlpDecoded>;
  close(): Promise<void>;
}

/**
 * Time a thread may spend reading one session upload, counted from when it starts on it (a wait in
 * the queue is bounded by the queue's length instead). On a 2-core machine an 8 MB Claude Code session
 * (4,000 messages) reads in about 1.5 s, 8 MB of the shortest messages (130,000) in about 8 s. The budget
 * is for what no test foresaw (like the quadratic regex of issue 29): stopping the thread is the only
 * way to get its CPU back.
 */
export const SESSION_READ_BUDGET_MS = 20_000;

/** The worker entry: TypeScript under tsx, the compiled file under dist/. */
function workerFile(): string {
  const source = import.meta.url.endsWith('.ts');
  return fileURLToPath(new URL(source ? './body-worker.ts' : './body-worker.js', import.meta.url));
}

/**
 * Threads that check large bodies and read MCP session uploads; none (0 threads): both run on the
 * event loop, session uploads with no time budget.
 */
export function createBodyChecker(o: { threads: number; queuePerThread?: number; sessionBudgetMs?: number }): BodyChecker | null {
  if (o.threads <= 0) return null;
  const pool = new Piscina<BodyTask | SessionThreadTask | OtlpDecodeTask, BodyOutcome | SessionOutcome | OtlpDecoded>({
    filename: workerFile(),
    // Started on first use and stopped after a minute idle: an API that gets no large body has none.
    minThreads: 0,
    maxThreads: o.threads,
    idleTimeout: 60_000,
    // A flood of large bodies waits in a bounded queue; past it, 503 (each waiting body is in memory).
    maxQueue: o.threads * (o.queuePerThread ?? 16),
  });
  const budgetMs = o.sessionBudgetMs ?? SESSION_READ_BUDGET_MS;
  const busy = (error: unknown) => (error as Error).message === 'Task queue is at limit';
  return {
    async check(task) {
      try {
        return (await pool.run(task)) as BodyOutcome;
      } catch (error) {
        if (busy(error)) throw new ServerBusyError('too many large bodies are being checked');
        throw error;
      }
    },
    async readSession(task) {
      // The thread says when it starts on the task; the budget runs from then. Aborting a running
      // task ends its thread (piscina starts another): the CPU comes back.
      const { port1: starts, port2: started } = new MessageChannel();
      const stop = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      starts.once('message', () => (timer = setTimeout(() => stop.abort(), budgetMs)));
      try {
        const threadTask: SessionThreadTask = { ...task, started };
        return (await pool.run(threadTask, { name: 'readSession', signal: stop.signal, transferList: [started] })) as SessionOutcome;
      } catch (error) {
        if (busy(error)) throw new ServerBusyError('too many large bodies are being checked');
        if (stop.signal.aborted) throw new SessionParseTimeoutError(budgetMs);
        throw error;
      } finally {
        clearTimeout(timer);
        starts.close();
      }
    },
    async decodeOtlp(task) {
      try {
        return (await pool.run(task, { name: 'decodeOtlp', transferList: [task.body.buffer as ArrayBuffer] })) as OtlpDecoded;
      } catch (error) {
        if (busy(error)) throw new ServerBusyError('too many large bodies are being checked');
        throw error;
      }
    },
    close: () => pool.destroy(),
  };
}

export interface JsonBodyOptions {
  /** The route's operationId: a thread compiles each route's schema once. */
  key: string;
  schema: JsonSchema;
  limitBytes: number;
  /** A body past the limit: 413 `payload_too_large` unless an area's contract says otherwise. */
  tooLarge?: ErrorKey;
  checker: BodyChecker | null;
  /** Bodies longer than this (characters of text) go to the checker. */
  offloadAbove: number;
  /** Run on the parsed body before the schema, on either path. */
  precheck?: BodyPrecheck;
}

/**
 * JSON only (415 otherwise), bounded in size (413, with an area's own errorCode when it has one).
 * The body parser reads the text (methods, limit, compression); parsing is ours. A body checked by a
 * thread is marked `bodyChecked`: the route does not validate it again. Such a body is validated
 * before the route's `afterBody` checks, which see only valid bodies.
 */
export function jsonBody(o: JsonBodyOptions): Middleware<AppContext['state']> {
  const { limitBytes } = o;
  const tooLarge = o.tooLarge ?? 'payload_too_large';
  const read = bodyParser({ enableTypes: ['text'], extendTypes: { text: ['application/json'] }, textLimit: limitBytes, encoding: 'utf-8' });
  const tooLargeError = () => new AppError(tooLarge, { message: `The request body exceeds ${limitBytes} bytes.` });
  return async (ctx: AppContext, next: Next) => {
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limitBytes) throw tooLargeError();
    // ctx.is() is null without a body (then validation answers 400) and false for another type.
    if (ctx.is('application/json') === false) {
      throw new AppError('unsupported_media_type', { message: 'Send the body as JSON with Content-Type: application/json.' });
    }
    try {
      await read(ctx, async () => undefined);
    } catch (error) {
      if ((error as { type?: string }).type === 'entity.too.large') throw tooLargeError();
      throw error;
    }
    const text: unknown = ctx.request.body;
    if (typeof text === 'string') {
      if (o.checker && text.length > o.offloadAbove) {
        const outcome = await o.checker.check({ key: o.key, schema: o.schema, text, precheck: o.precheck });
        if (outcome.kind === 'refused') throw new AppError(outcome.key, { message: outcome.message, details: outcome.details });
        ctx.request.body = JSON.parse(outcome.json);
        ctx.state.bodyChecked = true;
      } else {
        ctx.request.body = parseJsonText(text);
        if (o.precheck) BODY_PRECHECKS[o.precheck](ctx.request.body);
      }
    }
    await next();
  };
}
