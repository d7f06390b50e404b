/**
 * The otlp-ingest benchmark's HTTP client, in a process of its own (as an exporter is). Usage:
 * node --import tsx bench/otlp-ingest-client.ts '<OtlpLoad JSON>'; prints the phase's Summary as
 * JSON. Every request is one new session of `turns` turns (a user message and a finalized assistant
 * answer each): as REST ingest events, or as OTLP spans (one model call a turn, GenAI conventions
 * 1.37's message attributes) in protobuf or JSON. The bodies are built before the timed phase.
 */
import { randomBytes } from 'node:crypto';
import protobuf from 'protobufjs';
import { Agent, request } from 'undici';
import { OTLP_DESCRIPTOR } from '../src/otel/otlp-descriptor.generated.js';
import { event } from './agent-events.js';
import { load } from './stats.js';

export interface OtlpLoad {
  url: string;
  secret: string;
  prefix: string;
  requests: number;
  concurrency: number;
  turns: number;
  format: 'rest' | 'protobuf' | 'json';
}

const o = JSON.parse(process.argv[2] ?? '{}') as OtlpLoad;
const dispatcher = new Agent({ connections: o.concurrency, keepAliveTimeout: 30_000 });
const REQUEST = protobuf.Root.fromJSON(OTLP_DESCRIPTOR).lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const events = Array.from({ length: 2 * o.turns }, (_, i) => event(i + 1));
const T0 = 1_764_237_600_000_000_000n;

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

function spans(session: string, hexIds: boolean) {
  const traceId = randomBytes(16);
  return Array.from({ length: o.turns }, (_, t) => {
    const [user, answer] = [events[2 * t]!, events[2 * t + 1]!];
    const spanId = randomBytes(8);
    const start = T0 + BigInt(t) * 10_000_000_000n;
    return {
      traceId: hexIds ? traceId.toString('hex') : traceId,
      spanId: hexIds ? spanId.toString('hex') : spanId,
      name: 'chat gpt-4.1',
      kind: 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 900_000_000n),
      attributes: [
        str('gen_ai.operation.name', 'chat'),
        str('gen_ai.provider.name', 'openai'),
        str('gen_ai.request.model', 'gpt-4.1'),
        str('gen_ai.conversation.id', session),
        int('gen_ai.usage.input_tokens', 120),
        int('gen_ai.usage.output_tokens', 80),
        str('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: user.content }] }])),
        str(
          'gen_ai.output.messages',
          JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer.content }], finish_reason: 'stop' }]),
        ),
      ],
    };
  });
}

function body(i: number): { body: string | Uint8Array; type: string; path: string } {
  const session = `${o.prefix}-${i}`;
  if (o.format === 'rest')
    return {
      body: JSON.stringify({ agentKey: 'bench', externalSessionId: session, participants: [], events }),
      type: 'application/json',
      path: '/v3/rest/agent-conversations/ingest',
    };
  const resource = { attributes: [str('service.name', 'bench-agent')] };
  const scopeSpans = [{ scope: { name: 'bench' }, spans: spans(session, o.format === 'json') }];
  const export_ = { resourceSpans: [{ resource, scopeSpans }] };
  return o.format === 'json'
    ? { body: JSON.stringify(export_), type: 'application/json', path: '/otel/v1/traces' }
    : { body: REQUEST.encode(REQUEST.fromObject(export_)).finish(), type: 'application/x-protobuf', path: '/otel/v1/traces' };
}

// Built before the clock starts: the client shares the machine's cores with the API, and encoding
// protobuf costs it more than JSON.stringify does; the timed phase sends only.
const bodies = Array.from({ length: o.requests }, (_, i) => body(i));
const send = async (i: number) => {
  const b = bodies[i]!;
  const res = await request(`${o.url}${b.path}`, {
    method: 'POST',
    dispatcher,
    body: b.body,
    headers: { 'content-type': b.type, 'x-service-agent-key': o.secret },
  });
  const text = await res.body.text();
  if (res.statusCode !== 202 && res.statusCode !== 200) throw new Error(`unexpected ${res.statusCode}: ${text}`);
  // An empty ExportTraceServiceResponse: nothing rejected, nothing to say.
  if ((o.format === 'json' && text !== '{}') || (o.format === 'protobuf' && text !== '')) throw new Error(`partial success: ${text}`);
};
const summary = await load(o.requests, o.concurrency, send);
process.stdout.write(`${JSON.stringify(summary)}\n`);
await dispatcher.close();
