import { strict as assert } from 'node:assert';
import { appendTelemetryEvents } from '../../../../src/domain/coding-sessions/append.js';
import { claudeCodeEvent, mapClaudeCodeRecords, type ClaudeCodeSettings } from '../../../../src/domain/otel/claude-code.js';
import { genAiLogSpans, isGenAiRecord } from '../../../../src/domain/otel/genai-logs.js';
import { mapGenAiSpans } from '../../../../src/domain/otel/genai.js';
import type { Attributes, AttrValue, OtelLogRecord } from '../../../../src/domain/otel/model.js';

const T0 = 1_795_770_000_000_000_000n;
const SETTINGS: ClaudeCodeSettings = { contentCapture: true, redactedFieldNames: [], redactedTextPatterns: ['Project Falcon'] };

function record(body: AttrValue, attributes: Attributes, o: Partial<OtelLogRecord> = {}): OtelLogRecord {
  return {
    timeUnixNano: T0,
    observedTimeUnixNano: T0,
    eventName: typeof attributes['event.name'] === 'string' ? attributes['event.name'] : '',
    body,
    attributes,
    traceId: null,
    spanId: null,
    resource: { 'service.name': 'claude-code', 'service.version': '2.0.14' },
    scope: { name: 'com.anthropic.claude_code.events', version: '2.0.14' },
    ...o,
  };
}
const cc = (name: string, sequence: number | null, attributes: Attributes = {}, session = 's-1') =>
  record(`claude_code.${name}`, {
    'event.name': name,
    'session.id': session,
    ...(sequence === null ? {} : { 'event.sequence': sequence }),
    ...attributes,
  });

describe("Claude Code's OpenTelemetry events as coding-agent sessions (issue 35)", () => {
  it('recognizes its events by body, event name or scope, and nothing else', () => {
    assert.equal(claudeCodeEvent(cc('user_prompt', 1)), 'user_prompt');
    assert.equal(
      claudeCodeEvent(record('', { 'event.name': 'claude_code.api_request' }, { scope: { name: 'x', version: '' } })),
      'api_request',
    );
    assert.equal(claudeCodeEvent(record('GET /', {}, { scope: { name: 'http', version: '' } })), null);
  });

  it("keeps prompts masked (the application's redactions, then secrets), the numbers of model requests and tool runs, never tool parameters", () => {
    const { sessions, rejected, ignored } = mapClaudeCodeRecords(
      [
        cc('api_request', 2, { model: 'claude-sonnet-4-5', input_tokens: '10', output_tokens: '3', cost_usd: '0.5', duration_ms: 'slow' }),
        cc('user_prompt', 1, {
          prompt: 'Ship Project Falcon with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789',
          'prompt.id': 'p1',
        }),
        cc('tool_result', 3, { tool_name: 'Bash', success: 'false', error: 'exit 1', tool_parameters: '{"bash_command":"rm -rf /"}' }),
        cc('hook_execution_start', 4),
      ],
      SETTINGS,
    );
    assert.equal(ignored, 1);
    assert.equal(rejected.count, 0);
    const [session] = sessions;
    assert.equal(session!.agentVersion, '2.0.14');
    assert.deepEqual(
      session!.events.map((e) => [e.key, e.type, e.content, e.details]),
      [
        ['s1', 'user_message', `Ship [REDACTED] with key [REDACTED:anthropic_api_key]`, { promptId: 'p1', promptLength: 78 }],
        ['s2', 'model_request', null, { model: 'claude-sonnet-4-5', inputTokens: 10, outputTokens: 3, costUsd: 0.5 }],
        ['s3', 'tool_result', null, { toolName: 'Bash', success: false, error: 'exit 1' }],
      ],
    );
  });

  it('without content capture keeps the length only; a record without session.id is rejected; sessions are apart', () => {
    const { sessions, rejected } = mapClaudeCodeRecords(
      [
        cc('user_prompt', 1, { prompt: 'secret plan', prompt_length: '11' }, 'a'),
        cc('user_prompt', 1, { prompt: 'other' }, 'b'),
        record('claude_code.api_request', { 'event.sequence': 2 }),
      ],
      { ...SETTINGS, contentCapture: false },
    );
    assert.deepEqual(
      sessions.map((s) => [s.externalId, s.events.map((e) => [e.content, e.details.promptLength])]),
      [
        ['a', [[null, 11]]],
        ['b', [[null, 5]]],
      ],
    );
    assert.equal(rejected.count, 1);
    assert.match(rejected.reasons[0]!, /without a usable session\.id/);
  });

  it('appends new events after those stored, each key once, a late one last; past the limit they are counted, not kept', () => {
    const mapped = (seqs: number[]) =>
      mapClaudeCodeRecords(
        seqs.map((n) => cc('user_prompt', n, { prompt: `p${n}` })),
        SETTINGS,
      ).sessions[0]!.events;
    const first = appendTelemetryEvents([], mapped([2, 1, 4]));
    assert.deepEqual(
      first.events.map((e) => [e.sequence, e.content]),
      [
        [1, 'p1'],
        [2, 'p2'],
        [3, 'p4'],
      ],
    );
    const second = appendTelemetryEvents(first.events, mapped([4, 3, 5]));
    assert.deepEqual([second.accepted, second.deduplicated], [2, 1]);
    assert.deepEqual(
      second.events.slice(3).map((e) => [e.sequence, e.content]),
      [
        [4, 'p3'],
        [5, 'p5'],
      ],
    );
    const full = appendTelemetryEvents(second.events, mapped([6, 7]), 6);
    assert.deepEqual([full.accepted, full.overLimit, full.events.length], [1, 1, 6]);
  });
});

describe('GenAI events sent as log records, read as the spans they name (issue 35)', () => {
  const span = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) };
  const genai = (name: string, body: AttrValue, at: bigint, attributes: Attributes = {}) =>
    record(
      body,
      { 'event.name': name, 'gen_ai.system': 'openai', ...attributes },
      { ...span, timeUnixNano: at, scope: { name: 'openai_v2', version: '' } },
    );

  it('one span per trace and span id, its messages keyed by time so that two exports of one call do not collide', () => {
    const question = [
      genai('gen_ai.system.message', { content: 'Be brief.' }, T0),
      genai('gen_ai.user.message', { content: 'Hi?' }, T0 + 1n),
    ];
    const answer = [genai('gen_ai.choice', { index: 0, finish_reason: 'stop', message: { content: 'Hello.' } }, T0 + 900n)];
    assert.ok([...question, ...answer].every(isGenAiRecord));
    const ids = (records: OtelLogRecord[]) =>
      mapGenAiSpans(genAiLogSpans(records).spans).sessions.flatMap((s) => s.messages.map((m) => [m.externalEventId, m.type, m.content]));
    const apart = [...ids(question), ...ids(answer)];
    assert.deepEqual(ids([...question, ...answer]), apart);
    assert.deepEqual(apart, [
      [`otel-${span.traceId}-${span.spanId}-in-l${T0 + 1n}`, 'user_message', 'Hi?'],
      [`otel-${span.traceId}-${span.spanId}-out-l${T0 + 900n}`, 'assistant_message', 'Hello.'],
    ]);
  });

  it('gen_ai.client.inference.operation.details carries the call as attributes; records without span ids are counted', () => {
    const details = genai('gen_ai.client.inference.operation.details', null, T0, {
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.output_tokens': 4,
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Q' }] }]),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'A' }] }]),
    });
    const orphan = { ...genai('gen_ai.user.message', { content: 'lost' }, T0), traceId: null, spanId: null };
    const { spans, unusable } = genAiLogSpans([details, orphan]);
    assert.equal(unusable.count, 1);
    const [session] = mapGenAiSpans(spans).sessions;
    assert.deepEqual(
      session!.messages.map((m) => [m.externalEventId.slice(-5), m.content, m.model?.name ?? null, m.usage?.outputTokens ?? null]),
      [
        ['-in-0', 'Q', null, null],
        ['out-0', 'A', 'gpt-4o-mini', 4],
      ],
    );
  });
});
