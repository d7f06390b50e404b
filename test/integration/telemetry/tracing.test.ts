import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { sql } from 'slonik';
import { z } from 'zod';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, stopTracing } from '../../../src/telemetry/tracing.js';
import { assistantMessage, processingContext, sessionRequest, userMessage, type ProcessingContext } from '../../../harness/agents.js';
import { testConfig } from '../../../harness/config.js';
import { eventually } from '../../../harness/wait.js';

/** The span named `name` in `spans`, with its parent found among them. */
function find(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((s) => s.name === name);
  assert.ok(span, `no span ${name} among ${spans.map((s) => s.name).join(', ')}`);
  return span;
}

function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined {
  return spans.find((s) => s.spanContext().spanId === span.parentSpanId);
}

/** The names from `span` up to the root of what `spans` holds. */
function ancestry(spans: readonly ReadableSpan[], span: ReadableSpan): string[] {
  const names = [span.name];
  for (let p = parentOf(spans, span); p; p = parentOf(spans, p)) names.push(p.name);
  return names;
}

/**
 * Tracing on (an in-memory exporter in place of OTLP): the API, the drainer, the session's workflow
 * and its activities, in one process here as in `npm start`, each instrumented as in production.
 */
describe('tracing: one trace from an agent ingest through the session workflow to its activities', function () {
  this.timeout(60_000);
  const exporter = new InMemorySpanExporter();
  let ctx: ProcessingContext;

  before(async () => {
    startTracing(testConfig(), 'intake-test', { spanProcessor: new SimpleSpanProcessor(exporter) });
    ctx = await processingContext();
  });
  after(async () => {
    await ctx?.close();
    await stopTracing();
  });

  it("continues the caller's traceparent from the HTTP request through the stored wake, the workflow and its activities", async () => {
    const app = await ctx.newApp();
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const events = [userMessage(1, 'the export is broken again'), assistantMessage(2, 'sorry, looking into it')];
    const res = await ctx.ingest(app, sessionRequest(app, events, { externalSessionId: 'traced', status: 'ended' }), {
      traceparent: `00-${traceId}-${callerSpanId}-01`,
    });
    assert.equal(res.status, 202);
    const sessionId = res.body.sessionId as string;
    await ctx.processedThrough(sessionId, 2);

    const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    // Spans are exported as they end: the workflow's run ends with the run, after its activities.
    const activityOfRun = (list: readonly ReadableSpan[]) =>
      list.find(
        (s) =>
          s.name.startsWith('RunActivity:') &&
          s.attributes.temporalWorkflowId === `agent-session/${sessionId}` &&
          parentOf(list, s) !== undefined,
      );
    const spans = await eventually(
      async () => inTrace(),
      (list) => list.some((s) => s.name === 'RunWorkflow:agentSessionWorkflow') && activityOfRun(list) !== undefined,
    );

    // The API's server span continues the caller's span.
    const server = find(spans, 'POST /v3/rest/agent-conversations/ingest');
    assert.equal(server.kind, SpanKind.SERVER);
    assert.equal(server.parentSpanId, callerSpanId);
    assert.equal(server.attributes['http.route'], '/v3/rest/agent-conversations/ingest');
    assert.equal(server.attributes['http.response.status_code'], 202);
    assert.equal(server.resource.attributes['service.name'], 'intake-test');

    // The drainer (another transaction, later) tells the workflow inside the ingest's trace,
    // linked to the drainer's own long-running activity.
    const wake = find(spans, 'wake agent session');
    assert.equal(wake.parentSpanId, server.spanContext().spanId);
    assert.equal(wake.attributes['intake.session_id'], sessionId);
    assert.equal(wake.links.length, 1, 'linked to the drainer activity that picked the wake up');

    // The workflow, started by that signal-with-start, and an activity it ran.
    const signalWithStart = find(spans, 'SignalWithStartWorkflow:agentSessionWorkflow');
    assert.equal(signalWithStart.parentSpanId, wake.spanContext().spanId);
    const run = find(spans, 'RunWorkflow:agentSessionWorkflow');
    assert.equal(run.parentSpanId, signalWithStart.spanContext().spanId);
    const activity = activityOfRun(spans)!;
    assert.deepEqual(ancestry(spans, activity).slice(-6).slice(2), [
      'RunWorkflow:agentSessionWorkflow',
      'SignalWithStartWorkflow:agentSessionWorkflow',
      'wake agent session',
      'POST /v3/rest/agent-conversations/ingest',
    ]);
    assert.match(ancestry(spans, activity)[1]!, /^StartActivity:/);
    for (const s of spans) assert.notEqual(s.status.code, SpanStatusCode.ERROR, `${s.name} failed`);

    // The request's log line carries the trace id.
    const line = ctx.api.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && l.route === '/v3/rest/agent-conversations/ingest');
    assert.equal(line?.traceId, traceId);
  });

  it('starts a new trace for a request without traceparent, and stores no trace for an untraced one', async () => {
    const app = await ctx.newApp();
    const res = await ctx.ingest(app, sessionRequest(app, [userMessage(1, 'hello')], { externalSessionId: 'fresh' }));
    assert.equal(res.status, 202);
    const server = await eventually(
      async () =>
        exporter
          .getFinishedSpans()
          .find((s) => s.kind === SpanKind.SERVER && s.attributes['intake.request_id'] === res.headers.get('x-request-id')),
      (s) => s !== undefined,
    );
    assert.ok(server);
    assert.equal(server.parentSpanId, undefined, 'a root span');

    // A caller that did not sample its trace: nothing is recorded for it, and nothing stored.
    const unsampled = randomBytes(16).toString('hex');
    const res2 = await ctx.ingest(app, sessionRequest(app, [userMessage(1, 'hello')], { externalSessionId: 'unsampled' }), {
      traceparent: `00-${unsampled}-${randomBytes(8).toString('hex')}-00`,
    });
    assert.equal(res2.status, 202);
    const stored = await ctx.pool.oneFirst(sql.type(z.object({ wake_trace_parent: z.string().nullable() }))`
      SELECT wake_trace_parent FROM agent_sessions WHERE id = ${res2.body.sessionId as string}`);
    assert.equal(stored, null);
    assert.equal(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === unsampled).length, 0);
  });
});
