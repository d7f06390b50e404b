/**
 * Captures what an instrumentation exports, as it sends it, into a fixture of
 * test/fixtures/otel/ (replayed by test/integration/otel/captured-exports.test.ts). For the
 * instrumentations that are too heavy to install in every CI run:
 *
 *   python3 -m venv /tmp/sk && /tmp/sk/bin/pip install semantic-kernel==1.45.0 opentelemetry-exporter-otlp-proto-http==1.45.2
 *   node --import tsx test/otel-matrix/capture.ts semantic-kernel /tmp/sk/bin/python "semantic-kernel 1.45.0"
 *
 * It runs chat.py against an OTLP sink on 127.0.0.1 and writes every request it got (path,
 * content type, body in base64), in order.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths.js';

export interface CapturedExport {
  /** The package and version that produced it, and the conversation's id (its session.id). */
  emitter: string;
  conversation: string;
  capturedAt: string;
  requests: { path: string; contentType: string; bodyBase64: string }[];
}

const [kind, python, emitter] = process.argv.slice(2);
if (!kind || !python || !emitter) throw new Error('usage: capture.ts <kind> <python> "<package> <version>"');

const requests: CapturedExport['requests'] = [];
const sink = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests.push({
      path: req.url ?? '',
      contentType: req.headers['content-type'] ?? '',
      bodyBase64: Buffer.concat(chunks).toString('base64'),
    });
    res.end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const conversation = `captured-${kind}`;
await promisify(execFile)(python, [path.join(PROJECT_ROOT, 'test', 'otel-matrix', 'chat.py'), kind], {
  timeout: 300_000,
  env: {
    PATH: process.env.PATH ?? '',
    INTAKE_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    INTAKE_SECRET: 'captured',
    CONVERSATION: conversation,
  },
});
sink.close();
const fixture: CapturedExport = { emitter, conversation, capturedAt: new Date().toISOString(), requests };
const out = path.join(PROJECT_ROOT, 'test', 'fixtures', 'otel', `${kind}.json`);
writeFileSync(out, `${JSON.stringify(fixture, null, 2)}\n`);
process.stdout.write(`${out}: ${requests.length} requests\n`);
