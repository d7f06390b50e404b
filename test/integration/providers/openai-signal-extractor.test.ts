import { strict as assert } from 'node:assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  createSignalExtractor,
  ExtractorError,
  OpenAiSignalExtractor,
  type Exchange,
} from '../../../src/providers/signal-extractor/index.js';
import { listenLocal, closeServer } from '../../../harness/http.js';
import { freePort } from '../../../src/dev/net.js';

const API_KEY = 'sk-test-5ecret-key-do-not-leak';
const exchange: Exchange = { userMessages: ['The export crashes.', 'Can you fix it?'], response: 'Try the streaming export.' };

interface Recorded {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: any;
}
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A stand-in for a chat-completions server; each test installs its own handler. */
let server: Server;
let baseUrl: string;
let handler: Handler;
let requests: Recorded[];

const completion = (content: string) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'test-model',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  });
const reply =
  (status: number, body: string, type = 'application/json'): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
const extractor = (timeoutMs = 5_000, url = baseUrl) =>
  new OpenAiSignalExtractor({ baseUrl: `${url}/v1/`, apiKey: API_KEY, model: 'test-model', timeoutMs });

async function failure(promise: Promise<unknown>): Promise<ExtractorError> {
  const error = await promise.then(
    () => assert.fail('expected the extraction to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ExtractorError, `expected an ExtractorError, got ${String(error)}`);
  assert.ok(!error.message.includes(API_KEY), `the API key leaked: ${error.message}`);
  return error;
}

describe('OpenAiSignalExtractor against a chat-completions server', () => {
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        requests.push({ method: req.method, url: req.url, headers: req.headers, body: body ? JSON.parse(body) : undefined });
        handler(req, res, body);
      });
    });
    baseUrl = `http://127.0.0.1:${await listenLocal(server)}`;
  });

  beforeEach(() => {
    requests = [];
    handler = reply(200, completion(JSON.stringify({ signals: [] })));
  });

  after(async () => {
    await closeServer(server);
  });

  it('sends a chat-completions request with the model, JSON mode, instructions and the exchange', async () => {
    assert.deepEqual(await extractor().extract(exchange), []);
    assert.equal(requests.length, 1);
    const [request] = requests;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/v1/chat/completions');
    assert.equal(request!.headers.authorization, `Bearer ${API_KEY}`);
    assert.match(request!.headers['content-type'] ?? '', /^application\/json/);
    const body = request!.body;
    assert.equal(body.model, 'test-model');
    assert.equal(body.temperature, 0);
    assert.deepEqual(body.response_format, { type: 'json_object' });
    assert.equal(body.messages.length, 2);
    assert.equal(body.messages[0].role, 'system');
    for (const word of ['signals', 'sentiment', 'issue', 'request', 'praise', 'topic', 'positive', 'negative']) {
      assert.ok(body.messages[0].content.includes(word), `instructions mention ${word}`);
    }
    assert.equal(body.messages[1].role, 'user');
    assert.deepEqual(JSON.parse(body.messages[1].content), exchange);
  });

  it('sends no authorization header without a key', async () => {
    const keyless = createSignalExtractor({ kind: 'openai', baseUrl, model: 'm', timeoutMs: 5_000 });
    assert.equal(keyless.name, 'openai');
    await keyless.extract(exchange);
    assert.equal(requests[0]!.url, '/chat/completions');
    assert.equal(requests[0]!.headers.authorization, undefined);
  });

  it('parses and normalises a good response', async () => {
    const long = 'word '.repeat(200);
    handler = reply(
      200,
      completion(
        JSON.stringify({
          signals: [
            { kind: 'issue', rating: 'negative', summary: 'The export crashes.', labels: ['Export', 'export', ' Crash ', ''] },
            {
              kind: 'Request',
              rating: 'urgent',
              summary: long,
              labels: Array.from({ length: 15 }, (_, i) => `label-${i}-${'x'.repeat(80)}`),
            },
            { kind: 'complaint', rating: 'negative', summary: 'Dropped: unknown kind.', labels: [] },
            { kind: 'praise', summary: 'No rating given.' },
            { kind: 'topic', rating: null, summary: '   ', labels: ['empty summary is dropped'] },
          ],
        }),
      ),
    );
    const signals = await extractor().extract(exchange);
    assert.deepEqual(
      signals.map((s) => [s.kind, s.rating]),
      [
        ['issue', 'negative'],
        ['request', null],
        ['praise', null],
      ],
    );
    assert.deepEqual(signals[0]!.labels, ['export', 'crash']);
    assert.equal(signals[0]!.summary, 'The export crashes.');
    assert.equal(signals[1]!.summary.length, 500);
    assert.equal(signals[1]!.labels.length, 10);
    for (const label of signals[1]!.labels) assert.ok(label.length <= 64 && label === label.toLowerCase());
    assert.deepEqual(signals[2]!.labels, []);
  });

  it('accepts JSON content wrapped in a code fence', async () => {
    handler = reply(200, completion('```json\n{"signals":[{"kind":"topic","rating":null,"summary":"Exports.","labels":["export"]}]}\n```'));
    assert.deepEqual(await extractor().extract(exchange), [{ kind: 'topic', rating: null, summary: 'Exports.', labels: ['export'] }]);
  });

  const statuses: [number, string, boolean][] = [
    [401, 'provider_unauthorized', false],
    [403, 'provider_unauthorized', false],
    [400, 'provider_rejected', false],
    [404, 'provider_rejected', false],
    [408, 'provider_unavailable', true],
    [409, 'provider_unavailable', true],
    [429, 'provider_unavailable', true],
    [500, 'provider_unavailable', true],
    [503, 'provider_unavailable', true],
  ];
  for (const [status, code, retryable] of statuses) {
    it(`maps HTTP ${status} to ${code} (retryable: ${retryable})`, async () => {
      // A server that echoes the credential back must not get it into the message.
      handler = (req, res) =>
        reply(status, JSON.stringify({ error: { message: `Bad credential ${req.headers.authorization}` } }))(req, res, '');
      const error = await failure(extractor().extract(exchange));
      assert.equal(error.code, code);
      assert.equal(error.retryable, retryable);
      assert.match(error.message, new RegExp(`HTTP ${status}`));
      assert.match(error.message, /\[redacted\]/);
    });
  }

  it('quotes at most 200 characters of an error body', async () => {
    handler = reply(400, `${'a'.repeat(150)}${'b'.repeat(5000)}`, 'text/plain');
    const error = await failure(extractor().extract(exchange));
    assert.equal(error.code, 'provider_rejected');
    assert.ok(error.message.length < 260, `message is ${error.message.length} characters`);
    assert.ok(!error.message.includes('b'.repeat(60)));
  });

  it('gives provider_unreachable when the server does not answer in time', async () => {
    handler = () => undefined;
    const started = Date.now();
    const error = await failure(extractor(200).extract(exchange));
    assert.equal(error.code, 'provider_unreachable');
    assert.equal(error.retryable, true);
    assert.match(error.message, /200 ms/);
    assert.ok(Date.now() - started < 3_000);
  });

  it('propagates the caller cancelling instead of blaming the provider', async () => {
    handler = () => undefined;
    const controller = new AbortController();
    const pending = extractor().extract(exchange, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('activity cancelled')), 50);
    await assert.rejects(
      pending,
      (e: unknown) => !(e instanceof ExtractorError) && e instanceof Error && e.message === 'activity cancelled',
    );
  });

  it('gives provider_unreachable when the connection is refused', async () => {
    const port = await freePort(); // nothing listens there
    const error = await failure(extractor(5_000, `http://127.0.0.1:${port}`).extract(exchange));
    assert.equal(error.code, 'provider_unreachable');
    assert.equal(error.retryable, true);
    assert.match(error.message, /ECONNREFUSED/);
  });

  const invalid: [string, Handler][] = [
    ['a body that is not JSON', reply(200, '<html>gateway</html>', 'text/html')],
    ['a body without choices', reply(200, JSON.stringify({ choices: [] }))],
    [
      'a null content (refusal)',
      reply(200, JSON.stringify({ choices: [{ message: { role: 'assistant', content: null, refusal: 'no' } }] })),
    ],
    ['content that is not JSON', reply(200, completion('Here are the signals: the user is upset.'))],
    ['content of the wrong shape', reply(200, completion(JSON.stringify({ sentiment: 'negative' })))],
    ['signals that are not objects', reply(200, completion(JSON.stringify({ signals: ['issue'] })))],
    ['a signal without a summary', reply(200, completion(JSON.stringify({ signals: [{ kind: 'issue', rating: 'negative' }] })))],
  ];
  for (const [what, answer] of invalid) {
    it(`gives invalid_response (retryable) for a 200 with ${what}`, async () => {
      handler = answer;
      const error = await failure(extractor().extract(exchange));
      assert.equal(error.code, 'invalid_response');
      assert.equal(error.retryable, true);
    });
  }
});
