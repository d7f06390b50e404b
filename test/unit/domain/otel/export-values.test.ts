import { strict as assert } from 'node:assert';
import protobuf from 'protobufjs';
import { OtlpLimitError, OtlpShapeError } from '../../../../src/domain/otel/model.js';
import { countValues, decodeOtlp, MAX_NESTING } from '../../../../src/otel/otlp-codec.js';
import { OTLP_DESCRIPTOR } from '../../../../src/otel/otlp-descriptor.generated.js';

const LOGS = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const count = (body: string | Buffer, max = 1_000) => countValues('logs', typeof body === 'string' ? Buffer.from(body) : body, 'json', max);

const request = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] },
      scopeLogs: [
        {
          scope: { name: 's' },
          logRecords: [
            {
              body: { stringValue: 'hi' },
              attributes: [{ key: 'k', value: { arrayValue: { values: [{ intValue: '1' }, { boolValue: true }] } } }],
            },
            { eventName: 'x' },
          ],
        },
      ],
    },
  ],
};

describe('OTLP exports counted from their bytes before they are decoded (issue 50)', () => {
  it('counts the same messages in protobuf as in JSON', () => {
    const proto = Buffer.from(LOGS.encode(LOGS.fromObject(request)).finish());
    // resourceLogs, resource, KeyValue, AnyValue, scopeLogs, scope, 2 records, body, KeyValue, AnyValue, ArrayValue, 2 AnyValues
    assert.equal(countValues('logs', proto, 'protobuf', 1_000), 14);
    // JSON has the request object itself too.
    assert.equal(count(json(request)), 15);
  });

  it('skips strings (escaped quotes and braces in them), counts scalars in arrays, not empty arrays', () => {
    assert.equal(count('{"a":"{\\"}{[[,,,"}'), 1);
    assert.equal(count('{"a":[1, 2 ,"x",true,null,{}], "b": [], "c": [ ]}'), 7);
    assert.equal(count('[[],[1],{}]'), 2);
  });

  it('stops at the limit and past the nesting, whatever follows', () => {
    assert.throws(() => count(`[${new Array(10_000_000).fill('0').join(',')}]`, 100), OtlpLimitError);
    assert.throws(() => count(`${'['.repeat(MAX_NESTING + 1)}${']'.repeat(MAX_NESTING + 1)}`), OtlpShapeError);
    assert.equal(count(`${'['.repeat(MAX_NESTING)}${']'.repeat(MAX_NESTING)}`), 0);
  });

  it('a protobuf body whose lengths do not hold together is not OTLP', () => {
    assert.throws(() => countValues('logs', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), 'protobuf', 100), OtlpShapeError);
    // A record that claims more bytes than its scope holds.
    assert.throws(() => countValues('logs', Buffer.from([0x0a, 0x04, 0x12, 0x02, 0x12, 0x05]), 'protobuf', 100), OtlpShapeError);
  });

  it('decodeOtlp answers too_large past each cap, and classifies what it keeps', () => {
    const limits = { maxItems: 1, maxAttributes: 10, maxValues: 100 };
    const decoded = decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits: { ...limits, maxItems: 2 } });
    assert.deepEqual(
      decoded.kind === 'logs' && [decoded.items, decoded.other, decoded.genAi.length, decoded.claudeCode.length],
      [2, 2, 0, 0],
    );
    assert.deepEqual(decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits }), {
      kind: 'too_large',
      message: 'the export holds more than 1 log records, the most one export may hold',
    });
    assert.equal(
      decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits: { ...limits, maxItems: 2, maxValues: 14 } }).kind,
      'too_large',
    );
    // A budget (the event loop's share) sends a larger export elsewhere; one past the limit is still too large.
    const roomy = { ...limits, maxItems: 2, maxValues: 100 };
    assert.deepEqual(decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits: roomy, budget: 5 }), {
      kind: 'elsewhere',
    });
    assert.equal(decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits: roomy, budget: 15 }).kind, 'logs');
    const tight = { ...roomy, maxValues: 14 };
    assert.equal(decodeOtlp({ signal: 'logs', body: json(request), encoding: 'json', limits: tight, budget: 500 }).kind, 'too_large');
  });
});
