import { strict as assert } from 'node:assert';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { emptyLogRecords, field } from '../../../harness/otlp-wire.js';
import { createBodyChecker, type BodyChecker } from '../../../api/json-body.js';
import { OTLP_DESCRIPTOR } from '../../../src/otel/otlp-descriptor.generated.js';

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR);
const LOGS_REQUEST = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
const TRACES_REQUEST = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const STATUS = root.lookupType('google.rpc.Status');

/** Log records (OTLP/JSON) with `attributes` attributes each. */
function jsonRecords(n: number, attributes = 1) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'noisy' } }] },
        scopeLogs: [
          {
            scope: { name: 'app' },
            logRecords: Array.from({ length: n }, (_, i) => ({
              eventName: 'app.event',
              body: { stringValue: `record ${i}` },
              attributes: Array.from({ length: attributes }, (_, j) => ({ key: `k${j}`, value: { intValue: String(j) } })),
            })),
          },
        ],
      },
    ],
  };
}

type OtlpError = { code: number; message: string; errorCode: string };

describe('OTLP receivers under hostile exports: caps per export, decoding off the event loop, the rate limit counted in records (issue 50)', function () {
  this.timeout(120_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let threads: BodyChecker;
  let decodedInThreads = 0;
  let api: TestApi;

  const post = (url: string, path: string, body: Buffer | string, headers: Record<string, string>, secret = app.secret) =>
    fetch(`${url}${path}`, { method: 'POST', body, headers: { 'X-Service-Agent-Key': secret, ...headers } });
  const stored = () =>
    t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT (SELECT count(*) FROM agent_sessions)::int + (SELECT count(*) FROM coding_sessions)::int AS n`);

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
    threads = createBodyChecker({ threads: 1 })!;
    const counted: BodyChecker = { ...threads, decodeOtlp: (task) => (decodedInThreads++, threads.decodeOtlp(task)) };
    api = await startTestApi({ pool: t.pool, config: testConfig({ BODY_WORKER_THREADS: '1' }), bodyChecker: counted });
  });
  after(async () => {
    await api?.close();
    await threads?.close();
    await t?.close();
  });

  it("the review's 7.8 KB of gzip inflating to 4,000,000 empty log records: 413 otlp_export_too_large as it inflates; uncompressed, 413 on its values; /healthz answers, nothing stored", async () => {
    const body = emptyLogRecords(4_000_000);
    const gzipped = gzipSync(body);
    assert.ok(gzipped.length < 8_000 && body.length < api.deps.config.otlp.bodyLimitBytes);
    const [bomb, health] = await Promise.all([
      post(api.url, '/otel/v1/logs', gzipped, { 'Content-Type': 'application/x-protobuf', 'Content-Encoding': 'gzip' }),
      fetch(`${api.url}/healthz`),
    ]);
    assert.equal(health.status, 200);
    assert.equal(bomb.status, 413);
    assert.deepEqual(STATUS.toObject(STATUS.decode(Buffer.from(await bomb.arrayBuffer()))), {
      code: 3,
      message:
        'Too large an OTLP export: its gzip inflates more than 100 times (OTLP_MAX_INFLATION_RATIO). Send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE). (errorCode otlp_export_too_large)',
    });

    const before = decodedInThreads;
    const plain = await post(api.url, '/otel/v1/logs', body, { 'Content-Type': 'application/x-protobuf' });
    assert.equal(plain.status, 413);
    assert.equal(plain.headers.get('content-type'), 'application/x-protobuf');
    const status = STATUS.toObject(STATUS.decode(Buffer.from(await plain.arrayBuffer()))) as { code: number; message: string };
    assert.deepEqual(status, {
      code: 3,
      message:
        'Too large an OTLP export: the export holds more than 524288 values (records, spans, attributes and the values inside them). Send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE). (errorCode otlp_export_too_large)',
    });
    assert.equal(decodedInThreads, before + 1, 'counted in a body thread, not on the event loop');

    // The same in OTLP/JSON: about 2.6 million empty objects.
    const json = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[${new Array(2_600_000).fill('{}').join(',')}]}]}]}`;
    const jsonBomb = await post(api.url, '/otel/v1/logs', json, { 'Content-Type': 'application/json' });
    assert.equal(jsonBomb.status, 413);
    assert.equal(((await jsonBomb.json()) as OtlpError).errorCode, 'otlp_export_too_large');
    assert.equal(await stored(), 0);
  });

  it('an export of few bytes and many values is decoded in a body thread, and only its count of records nobody keeps comes back', async () => {
    // 8,000 records of two attributes: 96 KB, under BODY_WORKER_THRESHOLD_BYTES, but 24,000 values, over the 16,384 the event loop decodes.
    const attribute = field(6, field(1, Buffer.from('a')));
    const record = field(2, Buffer.concat([attribute, attribute]));
    const body = field(1, field(2, Buffer.concat(new Array<Buffer>(8_000).fill(record))));
    assert.ok(body.length < api.deps.config.http.bodyWorkerThresholdBytes);
    const before = decodedInThreads;
    const res = await post(api.url, '/otel/v1/logs', body, { 'Content-Type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
    assert.equal(decodedInThreads, before + 1);
    const answer = root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');
    const decoded = answer.toObject(answer.decode(Buffer.from(await res.arrayBuffer()))) as { partialSuccess?: { errorMessage: string } };
    assert.match(
      decoded.partialSuccess!.errorMessage,
      /^8000 record\(s\) neither GenAI messages nor Claude Code events Intake keeps: accepted and not stored$/,
    );
    // A small export stays on the event loop.
    const small = await post(api.url, '/otel/v1/logs', JSON.stringify(jsonRecords(3)), { 'Content-Type': 'application/json' });
    assert.equal(small.status, 200);
    assert.equal(decodedInThreads, before + 1);
  });

  it('caps records, attributes, events and values per export with a 413 naming the cap; an export within them is taken', async () => {
    const capped = await startTestApi({
      pool: t.pool,
      config: testConfig({ OTLP_MAX_RECORDS_PER_EXPORT: '10', OTLP_MAX_ATTRIBUTES: '4', OTLP_MAX_VALUES_PER_EXPORT: '200' }),
    });
    try {
      const send = (body: unknown) => post(capped.url, '/otel/v1/logs', JSON.stringify(body), { 'Content-Type': 'application/json' });
      const refusal = async (res: Response) => {
        assert.equal(res.status, 413);
        return ((await res.json()) as OtlpError).message;
      };
      assert.equal((await send(jsonRecords(10, 4))).status, 200);
      assert.equal(
        await refusal(await send(jsonRecords(11))),
        'Too large an OTLP export: the export holds more than 10 log records, the most one export may hold. Send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BLRP_MAX_EXPORT_BATCH_SIZE).',
      );
      assert.match(await refusal(await send(jsonRecords(1, 5))), /: an element has 5 attributes, over the 4 an export may give one\./);
      // A nested array of 300 values in one attribute: within the attribute cap, past the values.
      const nested = jsonRecords(1);
      nested.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!.attributes[0]!.value = {
        arrayValue: { values: Array.from({ length: 300 }, () => ({ boolValue: true })) },
      } as never;
      assert.match(await refusal(await send(nested)), /: the export holds more than 200 values /);
      // Scalars in an array count too (they are values the parser makes), in protobuf as in JSON.
      const scalars = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x"}}],"schemaUrl":"s"}],"x":[${new Array(300).fill(0).join(',')}]}]}`;
      assert.match(await refusal(await send(JSON.parse(scalars))), /more than 200 values/);

      // Spans: events per span under the attribute cap too.
      const span = (events: number) =>
        TRACES_REQUEST.encode(
          TRACES_REQUEST.fromObject({
            resourceSpans: [
              {
                scopeSpans: [
                  {
                    spans: [
                      {
                        traceId: Buffer.alloc(16, 1),
                        spanId: Buffer.alloc(8, 2),
                        name: 'http',
                        events: Array.from({ length: events }, (_, i) => ({ name: `e${i}` })),
                      },
                    ],
                  },
                ],
              },
            ],
          }),
        ).finish();
      assert.equal(
        (await post(capped.url, '/otel/v1/traces', Buffer.from(span(4)), { 'Content-Type': 'application/x-protobuf' })).status,
        200,
      );
      const tooManyEvents = await post(capped.url, '/otel/v1/traces', Buffer.from(span(5)), { 'Content-Type': 'application/x-protobuf' });
      assert.equal(tooManyEvents.status, 413);
      const status = STATUS.toObject(STATUS.decode(Buffer.from(await tooManyEvents.arrayBuffer()))) as { message: string };
      assert.match(status.message, /: a span has 5 events, over the 4 an export may give one\. .*\(errorCode otlp_export_too_large\)$/);

      // A protobuf export of 11 records is refused the same way.
      const protoRecords = LOGS_REQUEST.encode(
        LOGS_REQUEST.fromObject({
          resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 11 }, () => ({ eventName: 'x' })) }] }],
        }),
      ).finish();
      assert.equal(
        (await post(capped.url, '/otel/v1/logs', Buffer.from(protoRecords), { 'Content-Type': 'application/x-protobuf' })).status,
        413,
      );
      assert.equal(await stored(), 0);
    } finally {
      await capped.close();
    }
  });

  it('the rate limit counts spans and log records, not exports: 429 with Retry-After past it, for that organization only', async () => {
    const limited = await startTestApi({
      pool: t.pool,
      databaseUrl: t.databaseUrl,
      config: testConfig({ OTLP_RECORD_RATE_LIMIT_PER_MINUTE: '100' }),
    });
    const otherOrg = await createTestOrg(t.pool);
    const other = await t.newApp(undefined, otherOrg);
    try {
      const send = (n: number, secret = app.secret) =>
        post(limited.url, '/otel/v1/logs', JSON.stringify(jsonRecords(n)), { 'Content-Type': 'application/json' }, secret);
      assert.equal((await send(60)).status, 200);
      const over = await send(60);
      assert.equal(over.status, 429);
      const retryAfter = Number(over.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(over.headers.get('ratelimit-limit'), '100');
      assert.equal(over.headers.get('ratelimit-remaining'), '0');
      assert.deepEqual(await over.json(), {
        code: 8,
        errorCode: 'rate_limited',
        message: `Rate limit of 100 spans and log records a minute (OTLP_RECORD_RATE_LIMIT_PER_MINUTE) exceeded; retry in ${retryAfter} s.`,
        retryAfterSeconds: retryAfter,
      });
      assert.equal((await send(60, other.secret)).status, 200, 'another organization has its own count');
    } finally {
      await limited.close();
    }
  });
});
