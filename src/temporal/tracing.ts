import { createRequire } from 'node:module';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { currentTracing } from '../telemetry/tracing.js';

/**
 * Temporal's OpenTelemetry interceptors (`@temporalio/interceptors-opentelemetry`): a client
 * carries the active span into the workflows it starts, signals or updates; the workflow's spans
 * (run, signals, activities scheduled) continue it; the worker's activity spans continue those.
 *
 * The workflow interceptors are in every workflow bundle, tracing on or off, so that turning
 * tracing on or off never changes the code a workflow runs (they add no command; their spans leave
 * the sandbox through the `exporter` sink, which every worker registers: dropped when tracing is
 * off). The client and activity interceptors are installed only with tracing on.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** The client interceptors of a process's Temporal clients (the API's, the CLI's, activities'). */
export function tracingClientInterceptors(): WorkflowClientInterceptor[] {
  return currentTracing().enabled ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** The activity interceptors: each activity runs in a span continuing its workflow's. */
export function tracingActivityInterceptors(): ActivityInterceptorsFactory[] {
  if (!currentTracing().enabled) return [];
  return [
    (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) }),
  ];
}

/** The sinks every worker running the workflow bundle registers (its replays included). */
export function workflowSinks(): InjectedSinks<OpenTelemetrySinks> {
  const tracing = currentTracing();
  return {
    exporter: tracing.enabled ? makeWorkflowExporter(tracing.spanProcessor, tracing.resource) : { export: { fn: () => undefined } },
  };
}
