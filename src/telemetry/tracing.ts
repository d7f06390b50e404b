import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, TraceFlags, type Attributes, type Link } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config.js';
import { packageVersion } from '../paths.js';

/**
 * OpenTelemetry tracing for one process (API, worker). Off unless OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: nothing is registered, and the HTTP middleware and Temporal interceptors are not installed,
 * so an untraced deployment pays nothing. On: spans go to the OTLP/HTTP endpoint in batches; the
 * exporter and the sampler read the standard OTEL_* variables themselves (headers, timeout,
 * OTEL_TRACES_SAMPLER). Like OpenTelemetry's own API, the tracing of a process is global: started
 * once by the entrypoint (or by a test, with an in-memory processor), read by what it instruments.
 */
export interface Tracing {
  enabled: boolean;
  /** Where finished spans go (the worker hands the workflows' spans to it too). */
  spanProcessor: SpanProcessor;
  resource: Resource;
}

const OFF: Tracing = { enabled: false, spanProcessor: new NoopSpanProcessor(), resource: Resource.empty() };

let active: { tracing: Tracing; provider: NodeTracerProvider } | null = null;

/** The process's tracing (off until startTracing). */
export function currentTracing(): Tracing {
  return active?.tracing ?? OFF;
}

/**
 * Starts the process's tracing when the configuration asks for it (or a test gives its own span
 * processor): registers the tracer provider, the async-local context and the W3C trace-context
 * propagator globally. Returns what it started; stopTracing flushes and unregisters it.
 */
export function startTracing(
  config: Pick<Config, 'tracing'>,
  defaultServiceName: string,
  o: { spanProcessor?: SpanProcessor } = {},
): Tracing {
  if (active) throw new Error('tracing is already started in this process');
  if (!config.tracing.otlpEndpoint && !o.spanProcessor) return OFF;
  const resource = new Resource({
    [ATTR_SERVICE_NAME]: config.tracing.serviceName ?? defaultServiceName,
    [ATTR_SERVICE_VERSION]: packageVersion(),
  });
  // The exporter appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT, as the specification says.
  const spanProcessor = o.spanProcessor ?? new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const tracing: Tracing = { enabled: true, spanProcessor, resource };
  active = { tracing, provider };
  return tracing;
}

/** Exports what is still buffered and unregisters the process's tracing. */
export async function stopTracing(): Promise<void> {
  if (!active) return;
  const { provider } = active;
  active = null;
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/**
 * The W3C `traceparent` of the active span when it is sampled, to store with work that a later
 * process picks up (an agent ingest's wake); null when tracing is off or the span is not sampled.
 */
export function currentTraceParent(): string | null {
  const span = trace.getActiveSpan();
  if (!span || !(span.spanContext().traceFlags & TraceFlags.SAMPLED)) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * Runs `fn` in a span that continues the trace of a stored `traceparent` (the request that asked
 * for this work), linked to the span active here (the long-running activity that picked it up).
 * Without a stored parent, or with tracing off, runs `fn` as it is.
 */
export async function inStoredTrace<T>(
  traceParent: string | null | undefined,
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (!traceParent || !active) return fn();
  const parent = propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
  if (!trace.getSpanContext(parent)) return fn();
  const here = trace.getActiveSpan()?.spanContext();
  const links: Link[] = here ? [{ context: here }] : [];
  return trace.getTracer('intake').startActiveSpan(name, { attributes, links }, parent, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
