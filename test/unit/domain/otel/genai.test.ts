import { strict as assert } from 'node:assert';
import { mapGenAiSpans } from '../../../../src/domain/otel/genai.js';
import type { Attributes, OtelSpan, OtelSpanEvent } from '../../../../src/domain/otel/model.js';
import { ingestRequests } from '../../../../src/domain/otel/ingest-request.js';
import { placeIncoming, toIncoming } from '../../../../src/domain/agent-events.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
let spanCounter = 0;
const T0 = 1_764_237_600_000_000_000n;

function span(
  attributes: Attributes,
  o: { events?: OtelSpanEvent[]; resource?: Attributes; start?: bigint; traceId?: string } = {},
): OtelSpan {
  const start = o.start ?? T0 + BigInt(++spanCounter) * 10_000_000_000n;
  return {
    traceId: o.traceId ?? TRACE,
    spanId: (++spanCounter).toString(16).padStart(16, '0'),
    parentSpanId: null,
    name: 'chat',
    startTimeUnixNano: start,
    endTimeUnixNano: start + 1_500_000_000n,
    attributes,
    events: o.events ?? [],
    resource: o.resource ?? { 'service.name': 'bot', 'telemetry.sdk.name': 'opentelemetry', 'telemetry.sdk.version': '1.30.1' },
    scope: { name: 'test', version: '' },
  };
}

const contents = (spans: OtelSpan[]) =>
  mapGenAiSpans(spans).sessions.map((s) => [s.externalSessionId, s.messages.map((m) => [m.type, m.content, m.final ?? null])]);

describe('GenAI spans as agent session messages (issue 35)', () => {
  it('gen_ai.input.messages / gen_ai.output.messages (1.37+): only the input after its last assistant message is new; system and tool messages are not kept', () => {
    const turn1 = span({
      'gen_ai.conversation.id': 'c1',
      'gen_ai.input.messages': JSON.stringify([
        { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
          finish_reason: 'tool_call',
        },
      ]),
    });
    const turn2 = span({
      'gen_ai.conversation.id': 'c1',
      'gen_ai.input.messages': JSON.stringify([
        { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather' }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'rainy, 57°F' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: 'Rainy, 57°F.' }], finish_reason: 'stop' },
      ]),
    });
    const mapped = mapGenAiSpans([turn2, turn1]);
    const messages = mapped.sessions[0]!.messages;
    assert.deepEqual(
      messages.map((m) => [m.type, m.content, m.final ?? null, m.toolCalls ?? null]),
      [
        ['user_message', 'Weather in Paris?', null, null],
        ['assistant_message', '', false, [{ id: 'call_1', name: 'get_weather' }]],
        ['assistant_message', 'Rainy, 57°F.', true, null],
      ],
    );
    const stored = messages.map((m) => `${m.content} ${JSON.stringify(m.toolCalls ?? [])}`).join('\n');
    assert.equal(stored.includes('rainy'), false, 'the tool result is not kept');
    assert.equal(stored.includes('Be brief'), false, 'the system prompt is not kept');
    assert.equal(messages[0]!.externalEventId, `otel-${TRACE}-${turn1.spanId}-in-1`);
    assert.equal(mapped.sessions[0]!.idSource, 'gen_ai.conversation.id');
  });

  it('span events (1.26 to 1.36): gen_ai.user.message and gen_ai.choice, with the body in gen_ai.event.content or in attributes', () => {
    const s = span(
      {
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 3,
      },
      {
        resource: { 'session.id': 'resource-session' },
        events: [
          { name: 'gen_ai.system.message', timeUnixNano: T0, attributes: { content: 'You are terse.' } },
          {
            name: 'gen_ai.user.message',
            timeUnixNano: T0,
            attributes: { 'gen_ai.event.content': JSON.stringify({ content: 'Hi there' }) },
          },
          {
            name: 'gen_ai.choice',
            timeUnixNano: T0,
            attributes: { 'gen_ai.event.content': JSON.stringify({ index: 0, finish_reason: 'stop', message: { content: 'Hello!' } }) },
          },
        ],
      },
    );
    const [session] = mapGenAiSpans([s]).sessions;
    assert.equal(session!.externalSessionId, 'resource-session');
    assert.deepEqual(
      session!.messages.map((m) => [m.type, m.content]),
      [
        ['user_message', 'Hi there'],
        ['assistant_message', 'Hello!'],
      ],
    );
    assert.deepEqual(session!.messages[1]!.model, { provider: 'openai', name: 'gpt-4o-mini' });
    assert.deepEqual(session!.messages[1]!.usage, { inputTokens: 12, outputTokens: 3, latencyMs: 1500 });
  });

  it('Semantic Kernel (1.24 to 1.26): gen_ai.content.prompt and gen_ai.content.completion events', () => {
    const s = span(
      { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o' },
      {
        events: [
          {
            name: 'gen_ai.content.prompt',
            timeUnixNano: T0,
            attributes: { 'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'Why is the sky blue?' }]) },
          },
          {
            name: 'gen_ai.content.completion',
            timeUnixNano: T0,
            attributes: { 'gen_ai.completion': JSON.stringify([{ role: 'assistant', content: 'Rayleigh scattering.' }]) },
          },
        ],
      },
    );
    assert.deepEqual(contents([s]), [
      [
        TRACE,
        [
          ['user_message', 'Why is the sky blue?', null],
          ['assistant_message', 'Rayleigh scattering.', true],
        ],
      ],
    ]);
  });

  it('OpenLLMetry attributes: gen_ai.prompt.<i>.* and gen_ai.completion.<i>.*, tool calls by name', () => {
    const s = span({
      'gen_ai.system': 'Anthropic',
      'gen_ai.request.model': 'claude-sonnet-4',
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'Be kind.',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'Book a table',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Booked for 8pm.',
      'gen_ai.completion.0.finish_reason': 'end_turn',
      'gen_ai.completion.0.tool_calls.0.name': 'book_table',
      'gen_ai.completion.0.tool_calls.0.id': 'toolu_1',
      'gen_ai.usage.prompt_tokens': 30,
      'gen_ai.usage.completion_tokens': 8,
    });
    const [session] = mapGenAiSpans([s]).sessions;
    assert.deepEqual(
      session!.messages.map((m) => [m.type, m.content, m.toolCalls ?? null]),
      [
        ['user_message', 'Book a table', null],
        ['assistant_message', 'Booked for 8pm.', [{ id: 'toolu_1', name: 'book_table' }]],
      ],
    );
    assert.deepEqual(session!.messages[1]!.usage, { inputTokens: 30, outputTokens: 8, latencyMs: 1500 });
  });

  it('OpenInference: llm.input_messages / llm.output_messages, session.id, llm.model_name and token counts', () => {
    const s = span({
      'openinference.span.kind': 'LLM',
      'session.id': 'oi-session',
      'user.id': 'user-7',
      'llm.model_name': 'gpt-4.1',
      'llm.provider': 'openai',
      'llm.token_count.prompt': 9,
      'llm.token_count.completion': 2,
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'Ping?',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'Pong.',
    });
    const [session] = mapGenAiSpans([s]).sessions;
    assert.equal(session!.externalSessionId, 'oi-session');
    assert.equal(session!.idSource, 'session.id');
    assert.deepEqual(
      session!.messages.map((m) => [m.type, m.content, m.userId ?? null]),
      [
        ['user_message', 'Ping?', 'user-7'],
        ['assistant_message', 'Pong.', null],
      ],
    );
    assert.deepEqual(session!.messages[1]!.model, { provider: 'openai', name: 'gpt-4.1' });
  });

  it('the Vercel AI SDK: its provider-call span gives the messages; the outer span that repeats them is ignored', () => {
    const outer = span({
      'ai.operationId': 'ai.generateText',
      'ai.prompt': JSON.stringify({ prompt: 'Name a color' }),
      'ai.response.text': 'Teal.',
      'ai.telemetry.metadata.sessionId': 'vercel-session',
    });
    const inner = span({
      'ai.operationId': 'ai.generateText.doGenerate',
      'ai.prompt.messages': JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Name a color' }] }]),
      'ai.response.text': 'Teal.',
      'ai.response.finishReason': 'stop',
      'ai.model.id': 'gpt-4o-mini',
      'ai.model.provider': 'openai.chat',
      'ai.usage.promptTokens': 5,
      'ai.usage.completionTokens': 2,
      'ai.telemetry.metadata.sessionId': 'vercel-session',
    });
    const mapped = mapGenAiSpans([outer, inner]);
    assert.deepEqual(contents([outer, inner]), [
      [
        'vercel-session',
        [
          ['user_message', 'Name a color', null],
          ['assistant_message', 'Teal.', true],
        ],
      ],
    ]);
    assert.equal(mapped.ignored.length, 0, 'the outer span is read (and found to repeat), not counted as foreign');
  });

  it('an agent span beside its model calls is not read twice; spans of no GenAI meaning are counted as ignored', () => {
    const messages = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Plan my trip' }] }]);
    const output = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Here is a plan.' }] }]);
    const agent = span({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.input.messages': messages, 'gen_ai.output.messages': output });
    const call = span({ 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': messages, 'gen_ai.output.messages': output });
    const http = span({ 'http.request.method': 'GET' });
    const mapped = mapGenAiSpans([agent, call, http]);
    assert.equal(mapped.sessions[0]!.messages.length, 2);
    assert.ok(mapped.sessions[0]!.messages.every((m) => m.trace.spanId === call.spanId));
    assert.equal(mapped.ignored.length, 2);
  });

  it('unreadable message attributes reject their span with a reason; sessions fall back to the trace id', () => {
    const bad = span({ 'gen_ai.input.messages': '[{"role":' });
    const notArray = span({ 'gen_ai.output.messages': JSON.stringify({ role: 'assistant' }) });
    const mapped = mapGenAiSpans([bad, notArray]);
    assert.equal(mapped.rejected.count, 2);
    assert.deepEqual(mapped.rejected.reasons, [
      `span ${bad.spanId}: gen_ai.input.messages is not valid JSON`,
      `span ${notArray.spanId}: gen_ai.output.messages is not an array of messages`,
    ]);
    assert.equal(mapped.sessions.length, 0);
  });

  it('sequences: requests give the time order; the writer keeps stored ones and appends new ones after the highest (a late message last)', () => {
    const early = span({ 'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: 'first' }]) }, { start: T0 });
    const late = span({ 'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: 'second' }]) }, { start: T0 + 5n });
    const [session] = mapGenAiSpans([late, early]).sessions;
    const fresh = ingestRequests('agent-1', session!);
    assert.deepEqual(
      fresh[0]!.events.map((e) => [e.sequence, e.content]),
      [
        [1, 'first'],
        [2, 'second'],
      ],
    );
    // `first` was stored at 7 with revision 2 and the session has reached 9: `second` arrives late.
    const incoming = fresh[0]!.events.map((e, i) => toIncoming(e, i));
    const placed = placeIncoming(incoming, [{ ...incoming[0]!, sequence: 7, revision: 2 }], 9);
    assert.deepEqual(
      placed.map((e) => [e.externalEventId, e.sequence, e.revision]),
      [
        [session!.messages[0]!.externalEventId, 7, 2],
        [session!.messages[1]!.externalEventId, 10, 1],
      ],
    );
    assert.equal(fresh[0]!.agentKey, 'agent-1');
    assert.deepEqual(fresh[0]!.source, { sdk: 'opentelemetry (OTLP)', version: '1.30.1' });
  });
});
