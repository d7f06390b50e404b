import { strict as assert } from 'node:assert';
import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { agentSessionOf, exportWith } from '../../helpers/otel.js';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import protobuf from 'protobufjs';
import { OTLP_DESCRIPTOR } from '../../../src/otel/otlp-descriptor.generated.js';
import { processingContext, type ProcessingContext, type TestAgentApp } from '../../../harness/agents.js';
import { eventually } from '../../../harness/wait.js';
import { AgentIngestWriter, INGEST_BATCHING } from '../../../src/agents/ingest.js';
import { ingestSpans } from '../../../src/otel/ingest.js';

const GITHUB_TOKEN = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;
const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR);
const STATUS = root.lookupType('google.rpc.Status');
const TRACES_RESPONSE = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
const TRACES_REQUEST = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

type Message = {
  role: string;
  parts: { type: string; content?: string; name?: string; id?: string; arguments?: unknown }[];
  finish_reason?: string;
};
const text = (role: string, content: string): Message => ({ role, parts: [{ type: 'text', content }] });

/** Spans recorded by a real SDK tracer (in memory), then sent by the exporters under test. */
function recorder(resource: Record<string, string> = {}) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': 'support-bot', 'service.version': '2.4.0', ...resource }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('test-genai');
  return {
    memory,
    /** One model call, as semantic conventions 1.37 describe it. */
    chat(conversation: string, input: Message[], output: Message[], extra: Attributes = {}): void {
      const span = tracer.startSpan('chat gpt-4o', {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.conversation.id': conversation,
          'gen_ai.usage.input_tokens': 120,
          'gen_ai.usage.output_tokens': 40,
          'gen_ai.input.messages': JSON.stringify(input),
          'gen_ai.output.messages': JSON.stringify(output),
          ...extra,
        },
      });
      span.end();
    },
    /** A span of no GenAI meaning (an HTTP call). */
    http(): void {
      tracer.startSpan('GET /status', { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'GET' } }).end();
    },
    take(): ReadableSpan[] {
      const spans = memory.getFinishedSpans();
      memory.reset();
      return [...spans];
    },
  };
}

describe('OTLP trace ingest: an unmodified exporter sends GenAI spans, which become agent sessions (issue 35)', function () {
  this.timeout(120_000);
  let t: ProcessingContext;
  let app: TestAgentApp;
  const endpoint = () => `${t.api.url}/otel/v1/traces`;
  const post = (body: Buffer | string, headers: Record<string, string>) =>
    fetch(endpoint(), { method: 'POST', body, headers: { 'X-Service-Agent-Key': app.secret, ...headers } });
  const sessionOf = (externalSessionId: string) =>
    agentSessionOf(t.api, { apiKey: t.org.apiKey, applicationId: app.app.id }, externalSessionId);

  before(async () => {
    t = await processingContext({ credits: 1000 });
    app = await t.newApp();
  });
  after(async () => {
    await t?.close();
  });

  it('protobuf and JSON exporters: the conversation in order across two calls, secrets masked, model, usage and trace kept, processed and metered', async () => {
    const r = recorder();
    const conversation = `conv-${randomBytes(4).toString('hex')}`;
    r.chat(
      conversation,
      [text('system', 'You are a support bot.'), text('user', `My token is ${GITHUB_TOKEN}, is it leaked?`)],
      [{ ...text('assistant', 'Rotate it now.'), finish_reason: 'stop' }],
    );
    r.http();
    const first = r.take();
    await exportWith(new ProtoExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': app.secret } }), first);
    r.chat(
      conversation,
      [
        text('system', 'You are a support bot.'),
        text('user', `My token is ${GITHUB_TOKEN}, is it leaked?`),
        text('assistant', 'Rotate it now.'),
        text('user', 'Done, thanks.'),
      ],
      [{ ...text('assistant', 'Glad to help.'), finish_reason: 'stop' }],
    );
    await exportWith(new JsonExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': app.secret } }), r.take());

    const session = await eventually(
      () => sessionOf(conversation),
      (s) => s !== null && s.processedThroughSequence === 4,
    );
    assert.ok(session);
    assert.deepEqual(
      session.events.map((e) => [e.sequence, e.type, e.content]),
      [
        [1, 'user_message', 'My token is [REDACTED:github_token], is it leaked?'],
        [2, 'assistant_message', 'Rotate it now.'],
        [3, 'user_message', 'Done, thanks.'],
        [4, 'assistant_message', 'Glad to help.'],
      ],
    );
    const answer = session.events[1]!;
    assert.equal(answer.final, true);
    assert.deepEqual(answer.model, { provider: 'openai', name: 'gpt-4o' });
    assert.equal((answer.usage as { inputTokens: number }).inputTokens, 120);
    assert.equal((answer.usage as { outputTokens: number }).outputTokens, 40);
    const trace = answer.trace as { traceId: string; spanId: string };
    assert.equal(trace.traceId, first[0]!.spanContext().traceId);
    assert.equal(trace.spanId, first[0]!.spanContext().spanId);
    // Processed (the watermark above) and metered: one unit per finalized response.
    const units = await eventually(
      async () => (await t.outcome(session.sessionId)).units,
      (n) => n === 2,
    );
    assert.equal(units, 2);

    // The same spans exported again are the same events: nothing new, nothing metered twice.
    await exportWith(new ProtoExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': app.secret } }), first);
    const again = await sessionOf(conversation);
    assert.equal(again?.events.length, 4);
    assert.equal((await t.outcome(session.sessionId)).units, 2);
  });

  it('exports of one conversation sent at once get distinct, gapless sequences, each message once', async () => {
    const conversation = `conv-${randomBytes(4).toString('hex')}`;
    const exports = Array.from({ length: 6 }, (_, i) => {
      const r = recorder();
      r.chat(conversation, [text('user', `question ${i}`)], [{ ...text('assistant', `answer ${i}`), finish_reason: 'stop' }]);
      return r.take();
    });
    const exporter = new JsonExporter({ url: endpoint(), headers: { 'X-Service-Agent-Key': app.secret } });
    await Promise.all([...exports, ...exports.slice(0, 3)].map((spans) => exportWith(exporter, spans)));
    const session = await sessionOf(conversation);
    assert.deepEqual(
      session?.events.map((e) => e.sequence),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    assert.deepEqual(
      new Set(session?.events.map((e) => e.content)),
      new Set(Array.from({ length: 6 }, (_, i) => [`question ${i}`, `answer ${i}`]).flat()),
    );
  });

  it('two API processes writing exports of one conversation at once: the sequences are placed under the session lock, gapless, each message once', async () => {
    const conversation = `conv-${randomBytes(4).toString('hex')}`;
    // Two writers: what two API processes have, each its own batching.
    const writers = [0, 1].map(() => new AgentIngestWriter(t.pool, { analysisCreditCost: 1, ...INGEST_BATCHING }));
    const start = BigInt(Date.now()) * 1_000_000n;
    const exportOf = (i: number) => ({
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: null,
      name: 'chat',
      startTimeUnixNano: start + BigInt(i) * 1_000_000n,
      endTimeUnixNano: start + BigInt(i) * 1_000_000n + 500_000n,
      attributes: {
        'gen_ai.conversation.id': conversation,
        'gen_ai.input.messages': JSON.stringify([text('user', `q${i}`)]),
        'gen_ai.output.messages': JSON.stringify([text('assistant', `a${i}`)]),
      },
      events: [],
      resource: {},
      scope: { name: '', version: '' },
    });
    const exports = Array.from({ length: 8 }, (_, i) => [exportOf(i)]);
    const outcomes = await Promise.all(
      [...exports, ...exports].map((spans, i) =>
        ingestSpans(app.agentKey, spans, { count: 0, reasons: [] }, (request) =>
          writers[i % 2]!.ingest(app.authority, request, { placeSequences: true }),
        ),
      ),
    );
    assert.deepEqual(
      outcomes.map((o) => o.rejected),
      outcomes.map(() => 0),
      outcomes.flatMap((o) => o.reasons).join('; '),
    );
    const session = await sessionOf(conversation);
    assert.deepEqual(
      session?.events.map((e) => e.sequence),
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    assert.deepEqual(
      new Set(session?.events.map((e) => e.content)),
      new Set(Array.from({ length: 8 }, (_, i) => [`q${i}`, `a${i}`]).flat()),
    );
  });

  it('answers in OTLP shapes: partialSuccess counts the spans it could not use and says why; JSON and protobuf alike', async () => {
    const traceId = randomBytes(16).toString('hex');
    const span = (spanId: string, attributes: { key: string; value: unknown }[]) => ({
      traceId,
      spanId,
      name: 'chat',
      startTimeUnixNano: '1764237600000000000',
      endTimeUnixNano: '1764237601000000000',
      attributes,
    });
    const good = span(randomBytes(8).toString('hex'), [
      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
      { key: 'gen_ai.input.messages', value: { stringValue: JSON.stringify([text('user', 'hello')]) } },
      { key: 'gen_ai.output.messages', value: { stringValue: JSON.stringify([text('assistant', 'hi')]) } },
    ]);
    const broken = span(randomBytes(8).toString('hex'), [{ key: 'gen_ai.input.messages', value: { stringValue: '[{"role": "user", ' } }]);
    const noIds = { ...span('', []), traceId: 'xyz' };
    // Over the spec's 256 KiB an event, in a session of its own: that session is rejected whole.
    const huge = span(randomBytes(8).toString('hex'), [
      { key: 'gen_ai.conversation.id', value: { stringValue: `huge-${traceId}` } },
      { key: 'gen_ai.input.messages', value: { stringValue: JSON.stringify([text('user', 'x'.repeat(300 * 1024))]) } },
    ]);
    const body = {
      resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 's' }, spans: [good, broken, noIds, huge] }] }],
    };
    const res = await post(JSON.stringify(body), { 'Content-Type': 'application/json' });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    assert.equal(answer.partialSuccess.rejectedSpans, '3');
    assert.match(answer.partialSuccess.errorMessage, /gen_ai\.input\.messages is not valid JSON/);
    assert.match(answer.partialSuccess.errorMessage, /without a valid traceId and spanId/);
    assert.match(
      answer.partialSuccess.errorMessage,
      /session "huge-[0-9a-f]+": body\.events\.0 is \d+ bytes; an event may have at most 262144/,
    );
    assert.equal(await sessionOf(`huge-${traceId}`), null, 'the rejected session stored nothing');
    // SDKs that drop partialSuccess (Python's) leave only the API's log to say it: a warning with the reasons.
    const warning = t.api.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.rejected === 3 && l.level === 40);
    assert.equal(warning?.msg, 'OTLP export: 3 spans rejected (partialSuccess)');
    assert.equal(warning?.reasons, answer.partialSuccess.errorMessage);
    assert.equal(warning?.applicationId, app.app.id);
    const session = await sessionOf(traceId);
    assert.deepEqual(
      session?.events.map((e) => [e.type, e.content]),
      [
        ['user_message', 'hello'],
        ['assistant_message', 'hi'],
      ],
    );

    // The same request gzipped is the same request: deduplicated.
    const exact = await post(gzipSync(JSON.stringify(body)), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(exact.status, 200);
    assert.equal(((await exact.json()) as { partialSuccess: { rejectedSpans: string } }).partialSuccess.rejectedSpans, '3');
    assert.equal((await sessionOf(traceId))?.events.length, 2);

    // The same spans in protobuf (ids as bytes): the same answer, in protobuf.
    const asBytes = (x: { traceId: string; spanId: string }) => ({
      ...x,
      traceId: Buffer.from(x.traceId, 'hex'),
      spanId: Buffer.from(x.spanId, 'hex'),
    });
    const protoBody = TRACES_REQUEST.encode(
      TRACES_REQUEST.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [good, broken, noIds, huge].map(asBytes) }] }] }),
    ).finish();
    const proto = await post(Buffer.from(protoBody), { 'Content-Type': 'application/x-protobuf' });
    assert.equal(proto.status, 200);
    assert.equal(proto.headers.get('content-type'), 'application/x-protobuf');
    const decoded = TRACES_RESPONSE.toObject(TRACES_RESPONSE.decode(Buffer.from(await proto.arrayBuffer())), { longs: Number }) as {
      partialSuccess: { rejectedSpans: number; errorMessage: string };
    };
    assert.equal(decoded.partialSuccess.rejectedSpans, 3);
    assert.match(decoded.partialSuccess.errorMessage, /gen_ai\.input\.messages is not valid JSON/);
    assert.equal((await sessionOf(traceId))?.events.length, 2);
  });

  it('refuses what is not an OTLP export: 400 with a google.rpc.Status (in JSON with errorCode), 401, 413, 415, and stores nothing', async () => {
    const json = await post('{"resourceSpans": 5}', { 'Content-Type': 'application/json' });
    assert.equal(json.status, 400);
    assert.deepEqual(await json.json(), {
      code: 3,
      message: 'Not an OTLP export request: request.resourceSpans must be an array.',
      errorCode: 'otlp_invalid_payload',
    });
    const notJson = await post('{"resourceSpans": [', { 'Content-Type': 'application/json' });
    assert.equal(notJson.status, 400);
    assert.equal(((await notJson.json()) as { errorCode: string }).errorCode, 'otlp_invalid_payload');

    const proto = await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), { 'Content-Type': 'application/x-protobuf' });
    assert.equal(proto.status, 400);
    assert.equal(proto.headers.get('content-type'), 'application/x-protobuf');
    const status = STATUS.toObject(STATUS.decode(Buffer.from(await proto.arrayBuffer()))) as { code: number; message: string };
    assert.equal(status.code, 3);
    assert.match(
      status.message,
      /^Not an OTLP export request: the body is not a protobuf ExportTraceServiceRequest\. \(errorCode otlp_invalid_payload\)$/,
    );

    const badGzip = await post('not gzip', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(badGzip.status, 400);
    assert.deepEqual(await badGzip.json(), { code: 3, message: 'The body is not valid gzip.', errorCode: 'otlp_invalid_payload' });

    const plain = await post('hello', { 'Content-Type': 'text/plain' });
    assert.equal(plain.status, 415);
    assert.equal(((await plain.json()) as { errorCode: string }).errorCode, 'unsupported_media_type');
    const brotli = await post('{}', { 'Content-Type': 'application/json', 'Content-Encoding': 'br' });
    assert.equal(brotli.status, 415);

    const anonymous = await fetch(endpoint(), { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(await anonymous.json(), {
      code: 16,
      message: 'Authentication required: send the ingest secret in X-Service-Agent-Key.',
      errorCode: 'unauthenticated',
    });
    const wrong = await fetch(endpoint(), {
      method: 'POST',
      body: Buffer.alloc(0),
      headers: { 'Content-Type': 'application/x-protobuf', 'X-Service-Agent-Key': 'iak_wrong' },
    });
    assert.equal(wrong.status, 401);
    const wrongStatus = STATUS.toObject(STATUS.decode(Buffer.from(await wrong.arrayBuffer()))) as { code: number; message: string };
    assert.deepEqual(wrongStatus, { code: 16, message: 'The ingest secret is not valid. (errorCode invalid_credentials)' });

    // A gzip bomb is cut off as it inflates past OTLP_MAX_INFLATION_RATIO (hostile-exports.test.ts has more).
    const limit = t.api.deps.config.otlp.bodyLimitBytes;
    const bomb = await post(gzipSync(Buffer.alloc(limit + 1, 0x20)), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(bomb.status, 413);
    assert.equal(((await bomb.json()) as { errorCode: string }).errorCode, 'otlp_export_too_large');
    // A body that inflates less, past the limit once decompressed.
    const random = randomBytes(limit + 1)
      .toString('base64')
      .slice(0, limit + 1);
    const large = await post(gzipSync(random), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(large.status, 413);
    assert.equal(((await large.json()) as { errorCode: string }).errorCode, 'payload_too_large');

    const sessions = await t.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${app.app.id}`, {
      headers: { 'X-Service-Api-Key': t.org.apiKey },
    });
    assert.equal(sessions.body.sessions.length, 4, 'only the four earlier tests stored sessions');
  });

  it('a client that goes away in the middle of a gzipped body: the request ends (400 request_aborted in the log), nothing waits on it', async () => {
    const requestId = `abort-${randomBytes(4).toString('hex')}`;
    const { port } = new URL(t.api.url);
    const body = gzipSync(JSON.stringify({ resourceSpans: [] }).padEnd(100_000, ' '));
    const req = httpRequest({
      port: Number(port),
      host: '127.0.0.1',
      method: 'POST',
      path: '/otel/v1/traces',
      headers: {
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
        'Content-Length': String(body.length),
        'X-Service-Agent-Key': app.secret,
        'X-Request-Id': requestId,
      },
    });
    req.on('error', () => undefined);
    req.write(body.subarray(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    req.destroy();
    const line = await eventually(
      async () => t.api.logs.find((l) => l.includes(requestId) && l.includes('"msg":"request"')),
      (l) => l !== undefined,
      10_000,
    );
    assert.ok(line, 'the request was logged as ended');
    assert.equal((JSON.parse(line) as { status: number }).status, 400);
  });

  it('an empty export is answered with an empty ExportTraceServiceResponse (protobuf)', async () => {
    const res = await post(Buffer.alloc(0), { 'Content-Type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
    assert.deepEqual(TRACES_RESPONSE.toObject(TRACES_RESPONSE.decode(Buffer.from(await res.arrayBuffer()))), {});
  });
});
