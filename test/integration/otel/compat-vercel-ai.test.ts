import { strict as assert } from 'node:assert';
import { agentSessionOf, exportWith } from '../../helpers/otel.js';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { LegacyOpenTelemetry, OpenTelemetry } from '@ai-sdk/otel';
import { z } from 'zod';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';

/** A model call's token counts in the provider interface's shape. */
const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/**
 * The compatibility matrix's Vercel AI SDK rows, from the package itself (ai 7, @ai-sdk/otel 1): a
 * tool loop run by `generateText` against the SDK's mock model, its spans recorded by the SDK's two
 * OpenTelemetry integrations (`OpenTelemetry`: GenAI semantic conventions with
 * gen_ai.input/output.messages; `LegacyOpenTelemetry`: the `ai.*` attributes of AI SDK 3 to 6) and
 * sent unchanged by the OTLP protobuf exporter.
 */
describe('OTLP compatibility: the Vercel AI SDK (ai 7 with @ai-sdk/otel)', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => {
    await t?.close();
  });

  /** A weather question answered after one tool call, as an agent built with the SDK runs it. */
  async function toolLoop(integration: 'semconv' | 'legacy'): Promise<ReadableSpan[]> {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: new Resource({ 'service.name': 'weather-agent', 'service.version': '1.0.0' }),
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
    const tracer = provider.getTracer('ai');
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        ++calls === 1
          ? {
              content: [
                { type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'weather', input: JSON.stringify({ city: 'Paris' }) },
              ],
              finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
              usage: usage(10, 5),
              warnings: [],
            }
          : {
              content: [{ type: 'text' as const, text: 'Rainy in Paris, 14°C.' }],
              finishReason: { unified: 'stop' as const, raw: 'stop' },
              usage: usage(20, 4),
              warnings: [],
            },
    });
    await generateText({
      model,
      system: 'Answer in one sentence.',
      prompt: 'What is the weather in Paris?',
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 'rainy, 14°C' }) },
      stopWhen: stepCountIs(3),
      experimental_telemetry: {
        isEnabled: true,
        functionId: 'weather',
        integrations: [integration === 'semconv' ? new OpenTelemetry({ tracer }) : new LegacyOpenTelemetry({ tracer })],
      },
    });
    await provider.forceFlush();
    return [...memory.getFinishedSpans()];
  }

  async function send(spans: ReadableSpan[]): Promise<void> {
    const exporter = new OTLPTraceExporter({ url: `${t.api.url}/otel/v1/traces`, headers: { 'X-Service-Agent-Key': app.secret } });
    await exportWith(exporter, spans);
  }

  async function events(traceId: string) {
    const session = await agentSessionOf(t.api, { apiKey: t.org.apiKey, applicationId: app.app.id }, traceId);
    assert.ok(session, `a session for trace ${traceId}`);
    return session.events;
  }

  for (const integration of ['semconv', 'legacy'] as const) {
    it(`${integration === 'semconv' ? 'OpenTelemetry (gen_ai.input/output.messages)' : 'LegacyOpenTelemetry (ai.* attributes)'}: the question, the tool-call step and the answer, once each, without the system prompt or the tool's result`, async () => {
      const spans = await toolLoop(integration);
      assert.ok(spans.length >= 3, `the SDK recorded spans (${spans.map((s) => s.name).join(', ')})`);
      await send(spans);
      const traceId = spans[0]!.spanContext().traceId;
      const stored = await events(traceId);
      assert.deepEqual(
        stored.map((e) => [e.sequence, e.type, e.content, e.final ?? null, e.toolCalls ?? null]),
        [
          [1, 'user_message', 'What is the weather in Paris?', null, null],
          [2, 'assistant_message', '', false, [{ id: 'call-1', name: 'weather' }]],
          [3, 'assistant_message', 'Rainy in Paris, 14°C.', true, null],
        ],
      );
      assert.deepEqual(stored[2]!.model, { provider: 'mock-provider', name: 'mock-model-id' });
      assert.equal(stored[2]!.usage?.inputTokens, 20);
      assert.equal(stored[2]!.usage?.outputTokens, 4);
      assert.ok(!JSON.stringify(stored).includes('one sentence'), 'no system prompt');
      assert.ok(!JSON.stringify(stored).includes('rainy, 14'), "no tool result (the tool answered 'rainy, 14°C')");
      // Re-sent: the same events.
      await send(spans);
      assert.equal((await events(traceId)).length, 3);
    });
  }
});
