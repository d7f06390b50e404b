import { strict as assert } from 'node:assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import type { AnyValueMap, LogBody } from '@opentelemetry/api-logs';
import { agentSessionOf, exportWith } from '../../helpers/otel.js';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import protobuf from 'protobufjs';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { createSignInUser, mcpAccessToken } from '../../../harness/oauth-browser.js';
import { startTestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createBodyChecker, type BodyChecker } from '../../../api/json-body.js';
import { OTLP_DESCRIPTOR } from '../../../src/otel/otlp-descriptor.generated.js';

const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;
const LOGS_RESPONSE = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');

/** Log records made by a real SDK logger (in memory), then sent by the exporters under test. */
function logRecorder(scope: { name: string; version: string }, resource: Record<string, string>) {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: new Resource(resource) });
  provider.addLogRecordProcessor(new SimpleLogRecordProcessor(memory));
  const logger = provider.getLogger(scope.name, scope.version);
  return {
    emit(body: LogBody, attributes: AnyValueMap, o: { at?: Date; span?: { traceId: string; spanId: string } } = {}): void {
      const context = o.span
        ? trace.setSpanContext(ROOT_CONTEXT, { traceId: o.span.traceId, spanId: o.span.spanId, traceFlags: TraceFlags.SAMPLED })
        : ROOT_CONTEXT;
      logger.emit({ body, attributes, context, ...(o.at ? { timestamp: o.at } : {}) });
    },
    take(): ReadableLogRecord[] {
      const records = memory.getFinishedLogRecords();
      memory.reset();
      return [...records];
    },
  };
}

/** Claude Code's telemetry as it sends it: its scope, the event's name as the body, string attributes. */
function claudeCode(sessionId: string) {
  const r = logRecorder(
    { name: 'com.anthropic.claude_code.events', version: '2.0.14' },
    { 'service.name': 'claude-code', 'service.version': '2.0.14' },
  );
  let sequence = 0;
  const base = Date.parse('2026-11-27T09:00:00.000Z');
  return {
    event(name: string, attributes: AnyValueMap, o: { sequence?: number | null } = {}) {
      const n = o.sequence === undefined ? ++sequence : o.sequence;
      const at = new Date(base + (n ?? 0) * 1000);
      r.emit(`claude_code.${name}`, {
        'event.name': name,
        'event.timestamp': at.toISOString(),
        ...(n === null ? {} : { 'event.sequence': n }),
        'session.id': sessionId,
        'user.email': 'ada@example.com',
        'user.account_uuid': randomUUID(),
        'terminal.type': 'vscode',
        ...attributes,
      });
    },
    take: () => r.take(),
  };
}

describe('OTLP log ingest: GenAI events become agent sessions, Claude Code events coding-agent sessions (issue 35)', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let mcp: Client;
  const endpoint = () => `${t.api.url}/otel/v1/logs`;
  const exporter = (kind: 'proto' | 'json', secret = app.secret) =>
    kind === 'proto'
      ? new ProtoLogExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': secret } })
      : new JsonLogExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': secret } });
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
    assert.ok(!r.isError, JSON.stringify(r.content));
    return r.structuredContent as Record<string, any>;
  };
  const storedEvents = (sessionId: string) =>
    t.pool.oneFirst(sql.type(z.object({ events: z.array(z.record(z.string(), z.any())) }))`
      SELECT events FROM coding_sessions WHERE id = ${sessionId}`);

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
    const user = await createSignInUser(t.pool, t.org.organizationId);
    mcp = new Client({ name: 'intake-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${t.api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${await mcpAccessToken(t.api.url, user)}` } },
      }),
    );
  });
  after(async () => {
    await mcp?.close();
    await t?.close();
  });

  it("Claude Code's events, through the SDK's protobuf and JSON exporters, become a coding-agent session the MCP tools list and associate", async () => {
    const sessionId = randomUUID();
    const cc = claudeCode(sessionId);
    const promptId = randomUUID();
    cc.event('user_prompt', { 'prompt.id': promptId, prompt: `Fix the login bug; my token is ${GITHUB_TOKEN}`, prompt_length: '58' });
    cc.event('api_request', {
      'prompt.id': promptId,
      model: 'claude-sonnet-4-5',
      input_tokens: '1200',
      output_tokens: '340',
      cache_read_tokens: '800',
      cache_creation_tokens: '0',
      cost_usd: '0.0123',
      duration_ms: '2100',
    });
    cc.event('tool_decision', { 'prompt.id': promptId, tool_name: 'Bash', decision: 'accept', source: 'config' });
    cc.event('tool_result', {
      'prompt.id': promptId,
      tool_name: 'Bash',
      success: 'true',
      duration_ms: '420',
      decision: 'accept',
      source: 'config',
      tool_parameters: JSON.stringify({ bash_command: `curl -H "Authorization: ${GITHUB_TOKEN}"` }),
    });
    cc.event('hook_execution', {}); // an event Intake does not keep
    const first = cc.take();
    await exportWith(exporter('proto'), first);
    cc.event('api_error', { model: 'claude-sonnet-4-5', error: `401 for ${GITHUB_TOKEN}`, status_code: '401', attempt: '1' });
    await exportWith(exporter('json'), cc.take());

    const listed = await call('list-agent-sessions', { source: 'telemetry', externalId: sessionId });
    assert.equal(listed.sessions.length, 1);
    const session = listed.sessions[0];
    assert.equal(session.source, 'telemetry');
    assert.equal(session.externalId, sessionId);
    assert.equal(session.format, 'claude-code-telemetry');
    assert.equal(session.eventCount, 5);
    assert.equal(session.agentVersion, '2.0.14');
    assert.equal(session.title, 'Fix the login bug; my token is [REDACTED:github_token]');

    const events = await storedEvents(session.sessionId);
    assert.deepEqual(
      events.map((e) => [e.sequence, e.type, e.content]),
      [
        [1, 'user_message', 'Fix the login bug; my token is [REDACTED:github_token]'],
        [2, 'model_request', null],
        [3, 'tool_decision', null],
        [4, 'tool_result', null],
        [5, 'model_error', null],
      ],
    );
    assert.deepEqual(events[0]!.details, { promptId, promptLength: 58 });
    assert.deepEqual(events[1]!.details, {
      promptId,
      model: 'claude-sonnet-4-5',
      inputTokens: 1200,
      outputTokens: 340,
      cacheReadTokens: 800,
      cacheCreationTokens: 0,
      costUsd: 0.0123,
      durationMs: 2100,
    });
    assert.deepEqual(events[3]!.details, {
      promptId,
      toolName: 'Bash',
      success: true,
      durationMs: 420,
      decision: 'accept',
      decisionSource: 'config',
    });
    assert.equal(events[4]!.details.error, '401 for [REDACTED:github_token]');
    assert.equal(events[0]!.occurredAt, '2026-11-27T09:00:01.000Z');
    // Nothing personal and no tool parameters are kept.
    const raw = JSON.stringify(events);
    for (const absent of ['ada@example.com', 'curl', GITHUB_TOKEN]) assert.ok(!raw.includes(absent), absent);

    // Re-sent: nothing new. A later export is appended; an event that comes late goes after those stored.
    await exportWith(exporter('proto'), first);
    cc.event('user_prompt', { prompt: 'Now add a test', prompt_length: '14' }, { sequence: 8 });
    cc.event('api_request', { model: 'claude-haiku-4-5', input_tokens: '10', output_tokens: '2' }, { sequence: 9 });
    await exportWith(exporter('json'), cc.take());
    // Claude Code's event 7 arrives after 8 and 9 were stored: appended, not inserted.
    cc.event('tool_result', { tool_name: 'Edit', success: 'false', error: 'file changed' }, { sequence: 7 });
    await exportWith(exporter('proto'), cc.take());
    const after = await storedEvents(session.sessionId);
    assert.deepEqual(
      after.slice(5).map((e) => [e.sequence, e.type, e.content ?? e.details.toolName ?? e.details.model]),
      [
        [6, 'user_message', 'Now add a test'],
        [7, 'model_request', 'claude-haiku-4-5'],
        [8, 'tool_result', 'Edit'],
      ],
    );
    assert.equal(after.length, 8);

    // The MCP tools associate it with a project, as an uploaded session.
    const project = await call('create-project', { name: `Telemetry ${randomBytes(3).toString('hex')}` });
    const associated = await call('associate-agent-session', {
      resourceType: 'project',
      resourceId: project.publicId,
      sessionId: session.sessionId,
    });
    assert.equal(associated.associated, true);
    const inProject = await call('list-associated-agent-sessions', { resourceType: 'project', resourceId: project.publicId });
    assert.deepEqual(
      inProject.sessions.map((s: { sessionId: string; format: string; eventCount: number }) => [s.sessionId, s.format, s.eventCount]),
      [[session.sessionId, 'claude-code-telemetry', 8]],
    );
  });

  it('content capture off keeps no prompt text, only its length; the title stays empty', async () => {
    const quiet = await t.newApp({ contentCapture: false });
    const sessionId = randomUUID();
    const cc = claudeCode(sessionId);
    cc.event('user_prompt', { prompt: 'A private question', prompt_length: '18' });
    await exportWith(exporter('json', quiet.secret), cc.take());
    const [session] = (await call('list-agent-sessions', { externalId: sessionId })).sessions;
    assert.equal(session.title, null);
    const [event] = await storedEvents(session.sessionId);
    assert.deepEqual([event!.type, event!.content, event!.details], ['user_message', null, { promptLength: 18 }]);
  });

  it('list-agent-sessions pages newest first, uploads and telemetry together, and filters by source', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      const cc = claudeCode(id);
      cc.event('user_prompt', { prompt: `prompt of ${id}` });
      await exportWith(exporter('json'), cc.take());
    }
    const upload = await call('upload-agent-session', {
      content: `${JSON.stringify({ type: 'user_message', content: `uploaded ${randomUUID()}` })}\n`,
    });
    const page1 = await call('list-agent-sessions', { limit: 2 });
    assert.deepEqual(
      page1.sessions.map((s: { sessionId: string }) => s.sessionId),
      [
        upload.sessionId,
        ...(await call('list-agent-sessions', { externalId: ids[2] })).sessions.map((s: { sessionId: string }) => s.sessionId),
      ],
    );
    assert.equal(page1.sessions[0].source, 'upload');
    assert.ok(page1.nextCursor);
    const page2 = await call('list-agent-sessions', { limit: 2, cursor: page1.nextCursor });
    assert.deepEqual(
      page2.sessions.map((s: { externalId: string }) => s.externalId),
      [ids[1], ids[0]],
    );
    const telemetry = await call('list-agent-sessions', { source: 'telemetry', limit: 500 });
    assert.ok(telemetry.sessions.every((s: { source: string }) => s.source === 'telemetry'));
    const bad = (await mcp.callTool({ name: 'list-agent-sessions', arguments: { cursor: 'bm9wZQ' } })) as CallToolResult;
    assert.equal(bad.isError, true);
    assert.match((bad.content[0] as { text: string }).text, /Invalid cursor/);
  });

  it('records that cannot be kept are counted in partialSuccess with the reason, in JSON and protobuf; the others are stored', async () => {
    const sessionId = randomUUID();
    const cc = claudeCode(sessionId);
    cc.event('user_prompt', { prompt: 'kept' });
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
          scopeLogs: [
            {
              scope: { name: 'com.anthropic.claude_code.events', version: '2.0.14' },
              logRecords: [
                {
                  timeUnixNano: '1795770000000000000',
                  body: { stringValue: 'claude_code.user_prompt' },
                  attributes: [
                    { key: 'session.id', value: { stringValue: sessionId } },
                    { key: 'event.sequence', value: { intValue: '1' } },
                    { key: 'prompt', value: { stringValue: 'kept' } },
                  ],
                },
                // No session.id: it belongs to no session.
                { timeUnixNano: '1795770000000000000', body: { stringValue: 'claude_code.api_request' }, attributes: [] },
              ],
            },
            {
              scope: { name: 'app' },
              logRecords: [
                // Neither a GenAI event nor Claude Code's: accepted, not stored.
                { body: { stringValue: 'GET /health 200' } },
                // A GenAI event without the span it belongs to.
                {
                  attributes: [{ key: 'event.name', value: { stringValue: 'gen_ai.user.message' } }],
                  body: { kvlistValue: { values: [] } },
                },
              ],
            },
          ],
        },
      ],
    };
    const json = await fetch(endpoint(), {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'X-Service-Agent-Key': app.secret, 'Content-Type': 'application/json' },
    });
    assert.equal(json.status, 200);
    const answer = (await json.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    assert.equal(answer.partialSuccess.rejectedLogRecords, '2', answer.partialSuccess.errorMessage);
    assert.match(answer.partialSuccess.errorMessage, /claude_code\.api_request record without a usable session\.id/);
    assert.match(answer.partialSuccess.errorMessage, /gen_ai\.user\.message record without a valid traceId and spanId/);
    assert.match(answer.partialSuccess.errorMessage, /1 record\(s\) neither GenAI messages nor Claude Code events/);
    const [session] = (await call('list-agent-sessions', { externalId: sessionId })).sessions;
    assert.equal(session.eventCount, 1);

    const logsRequest = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).lookupType(
      'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
    );
    const proto = await fetch(endpoint(), {
      method: 'POST',
      body: Buffer.from(logsRequest.encode(logsRequest.fromObject(body)).finish()),
      headers: { 'X-Service-Agent-Key': app.secret, 'Content-Type': 'application/x-protobuf' },
    });
    assert.equal(proto.status, 200);
    const decoded = LOGS_RESPONSE.toObject(LOGS_RESPONSE.decode(Buffer.from(await proto.arrayBuffer())), { longs: Number }) as {
      partialSuccess: { rejectedLogRecords: number; errorMessage: string };
    };
    assert.equal(decoded.partialSuccess.rejectedLogRecords, 2);
    assert.match(decoded.partialSuccess.errorMessage, /without a usable session\.id/);
    // The re-sent record is the same event.
    assert.equal((await call('list-agent-sessions', { externalId: sessionId })).sessions[0].eventCount, 1);

    const unauthenticated = await fetch(endpoint(), { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(unauthenticated.status, 401);
    assert.deepEqual(await unauthenticated.json(), {
      code: 16,
      message: 'Authentication required: send the ingest secret in X-Service-Agent-Key.',
      errorCode: 'unauthenticated',
    });
    const invalid = await fetch(endpoint(), {
      method: 'POST',
      body: '{"resourceLogs": 3}',
      headers: { 'X-Service-Agent-Key': app.secret, 'Content-Type': 'application/json' },
    });
    assert.equal(invalid.status, 400);
    assert.deepEqual(await invalid.json(), {
      code: 3,
      message: 'Not an OTLP export request: request.resourceLogs must be an array.',
      errorCode: 'otlp_invalid_payload',
    });
  });

  it('GenAI events sent as log records (semantic conventions 1.26–1.36 and 1.37) become agent session messages, an answer exported apart from its question included', async () => {
    const r = logRecorder(
      { name: 'opentelemetry.instrumentation.openai_v2', version: '2.1b0' },
      { 'service.name': 'py-bot', 'telemetry.sdk.name': 'opentelemetry', 'telemetry.sdk.version': '1.38.0' },
    );
    const traceId = randomBytes(16).toString('hex');
    const call1 = { traceId, spanId: randomBytes(8).toString('hex') };
    const t0 = Date.parse('2026-11-27T10:00:00.000Z');
    r.emit(
      { content: 'You are terse.' },
      { 'event.name': 'gen_ai.system.message', 'gen_ai.system': 'openai' },
      { span: call1, at: new Date(t0) },
    );
    r.emit(
      { content: `Is ${GITHUB_TOKEN} a token?` },
      { 'event.name': 'gen_ai.user.message', 'gen_ai.system': 'openai' },
      { span: call1, at: new Date(t0 + 1) },
    );
    const question = r.take();
    await exportWith(exporter('proto'), question);
    // The answer comes in the next export (the SDK's batch processor sent the question already).
    r.emit(
      { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Yes: rotate it.' } },
      { 'event.name': 'gen_ai.choice', 'gen_ai.system': 'openai' },
      { span: call1, at: new Date(t0 + 900) },
    );
    // A second call, as semantic conventions 1.37 send it: one record with the messages as attributes.
    const call2 = { traceId, spanId: randomBytes(8).toString('hex') };
    r.emit(
      null,
      {
        'event.name': 'gen_ai.client.inference.operation.details',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 30,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: `Is ${GITHUB_TOKEN} a token?` }] },
          { role: 'assistant', parts: [{ type: 'text', content: 'Yes: rotate it.' }] },
          { role: 'user', parts: [{ type: 'text', content: 'Done.' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Good.' }], finish_reason: 'stop' },
        ]),
      },
      { span: call2, at: new Date(t0 + 5000) },
    );
    await exportWith(exporter('json'), r.take());
    await exportWith(exporter('json'), question); // re-sent: the same events

    const session = await agentSessionOf(t.api, { apiKey: t.org.apiKey, applicationId: app.app.id }, traceId);
    assert.ok(session);
    assert.deepEqual(
      session.events.map((e) => [e.sequence, e.type, e.content]),
      [
        [1, 'user_message', 'Is [REDACTED:github_token] a token?'],
        [2, 'assistant_message', 'Yes: rotate it.'],
        [3, 'user_message', 'Done.'],
        [4, 'assistant_message', 'Good.'],
      ],
    );
    assert.ok(session.events[0]!.externalEventId.startsWith(`otel-${traceId}-${call1.spanId}-in-l`));
    assert.equal(session.events[3]!.externalEventId, `otel-${traceId}-${call2.spanId}-out-0`);
  });

  it('a body past BODY_WORKER_THRESHOLD_BYTES is decoded in a body thread: the same sessions, the same 400 for one that is not OTLP', async () => {
    const threads = createBodyChecker({ threads: 1 })!;
    let decoded = 0;
    const checker: BodyChecker = { ...threads, decodeOtlp: (task) => (decoded++, threads.decodeOtlp(task)) };
    const api = await startTestApi({ pool: t.pool, config: testConfig({ BODY_WORKER_THRESHOLD_BYTES: '64' }), bodyChecker: checker });
    try {
      const sessionId = randomUUID();
      const cc = claudeCode(sessionId);
      cc.event('user_prompt', { prompt: 'decoded in a thread' });
      cc.event('api_request', { model: 'claude-haiku-4-5' });
      await exportWith(new ProtoLogExporter({ url: `${api.url}/otel/v1/logs`, headers: { 'X-Service-Agent-Key': app.secret } }), cc.take());
      const [session] = (await call('list-agent-sessions', { externalId: sessionId })).sessions;
      assert.deepEqual([session.title, session.eventCount], ['decoded in a thread', 2]);
      const garbage = await fetch(`${api.url}/otel/v1/logs`, {
        method: 'POST',
        body: Buffer.concat([Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(4096, 0x41)]),
        headers: { 'X-Service-Agent-Key': app.secret, 'Content-Type': 'application/x-protobuf' },
      });
      assert.equal(garbage.status, 400);
      assert.equal(garbage.headers.get('content-type'), 'application/x-protobuf');
      assert.equal(decoded, 2);
    } finally {
      await api.close();
      await threads.close();
    }
  });
});
