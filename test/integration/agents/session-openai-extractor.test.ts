import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import { sql } from 'slonik';
import { z } from 'zod';
import { OpenAiSignalExtractor } from '../../../src/providers/signal-extractor/openai.js';
import { eventually } from '../../../harness/wait.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { listenLocal, closeServer } from '../../../harness/http.js';

const API_KEY = 'sk-session-test-key';

/**
 * The session workflow with the OpenAI-compatible adapter, against a local chat-completions
 * server: signals come from the model, transient failures are retried, a refusal fails only
 * that analysis (no credits), and the key reaches the server but no log or row.
 */
describe('agent session workflow with the OpenAI-compatible signal extractor', function () {
  this.timeout(120_000);
  let server: Server;
  let ctx: ProcessingContext;
  let app: TestAgentApp;
  /** What the fake model does with the next calls, by the response text it sees. */
  let mode: Record<string, 'ok' | 'unauthorized' | 'flaky' | 'down' | 'garbage'> = {};
  let calls: { response: string; auth: string | undefined }[] = [];
  const failuresLeft = new Map<string, number>();

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const request = JSON.parse(body) as { messages: { role: string; content: string }[] };
        const exchange = JSON.parse(request.messages.at(-1)!.content) as { response: string };
        calls.push({ response: exchange.response, auth: req.headers.authorization });
        const m = mode[exchange.response] ?? 'ok';
        if (m === 'unauthorized')
          return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}');
        if (m === 'down') return void res.writeHead(503).end('down for maintenance');
        if (m === 'garbage') {
          return void res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ choices: [{ message: { content: 'I think it is fine.' } }] }));
        }
        if (m === 'flaky' && (failuresLeft.get(exchange.response) ?? 2) > 0) {
          failuresLeft.set(exchange.response, (failuresLeft.get(exchange.response) ?? 2) - 1);
          return void res.writeHead(503).end('overloaded');
        }
        const signals = [{ kind: 'issue', rating: 'negative', summary: `Model says: ${exchange.response}`, labels: ['Export'] }];
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ signals }) } }],
          }),
        );
      });
    });
    const baseUrl = `http://127.0.0.1:${await listenLocal(server)}/v1`;
    ctx = await processingContext({
      credits: 100,
      deps: { extractor: new OpenAiSignalExtractor({ baseUrl, apiKey: API_KEY, model: 'test-model', timeoutMs: 2000 }) },
    });
    app = await ctx.newApp();
  });
  after(async () => {
    await ctx?.close();
    await closeServer(server);
  });
  beforeEach(() => {
    mode = {};
    calls = [];
  });

  const jobs = (sessionId: string) =>
    ctx.pool.any(sql.type(z.object({ status: z.string(), error_code: z.string().nullable(), credits_spent: z.number() }))`
    SELECT status, error_code, credits_spent FROM agent_analysis_jobs WHERE session_id = ${sessionId} ORDER BY id`);

  it("stores the model's signals (producer openai), retrying a provider that is briefly unavailable", async () => {
    mode = { 'flaky answer': 'flaky' };
    const res = await ctx.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'export?'), assistantMessage(2, 'flaky answer')], { externalSessionId: 'ok', status: 'ended' }),
    );
    const sessionId = res.body.sessionId as string;
    await ctx.processedThrough(sessionId, 2, 60_000);
    const signals = await ctx.pool.any(sql.type(
      z.object({ kind: z.string(), rating: z.string().nullable(), summary: z.string(), labels: z.array(z.string()), producer: z.string() }),
    )`
      SELECT kind, rating, summary, labels, producer FROM agent_signals WHERE session_id = ${sessionId} AND source = 'qualitative_inference'`);
    assert.deepEqual(signals, [
      { kind: 'issue', rating: 'negative', summary: 'Model says: flaky answer', labels: ['export'], producer: 'openai' },
    ]);
    assert.equal(calls.length, 3, 'two 503s, then the answer');
    assert.ok(calls.every((c) => c.auth === `Bearer ${API_KEY}`));
    assert.deepEqual(await jobs(sessionId), [{ status: 'done', error_code: null, credits_spent: 1 }]);
  });

  it('a refusal (401) fails that analysis only, spends nothing, and processing goes on', async () => {
    mode = { 'refused answer': 'unauthorized' };
    const before = await ctx.pool.oneFirst(
      sql.type(z.object({ b: z.number() }))`SELECT credit_balance AS b FROM organizations WHERE id = ${ctx.org.organizationId}`,
    );
    const res = await ctx.ingest(
      app,
      sessionRequest(
        app,
        [userMessage(1, 'q'), assistantMessage(2, 'refused answer'), userMessage(3, 'q2'), assistantMessage(4, 'fine answer')],
        { externalSessionId: 'refused', status: 'ended' },
      ),
    );
    const sessionId = res.body.sessionId as string;
    await ctx.processedThrough(sessionId, 4);
    assert.deepEqual(await jobs(sessionId), [
      { status: 'failed', error_code: 'provider_unauthorized', credits_spent: 0 },
      { status: 'done', error_code: null, credits_spent: 1 },
    ]);
    const after = await ctx.pool.oneFirst(
      sql.type(z.object({ b: z.number() }))`SELECT credit_balance AS b FROM organizations WHERE id = ${ctx.org.organizationId}`,
    );
    assert.equal(before - after, 1);
    assert.equal((await ctx.outcome(sessionId)).units, 2, 'both responses are metered');
    const logged = ctx.api.logs.join('\n');
    assert.ok(!logged.includes(API_KEY));
    const stored = await ctx.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_signals WHERE summary LIKE ${'%' + API_KEY + '%'}`);
    assert.equal(stored, 0);
  });

  it('a provider that is down holds analyses back while explicit feedback, metering and the watermark go on', async () => {
    mode = { 'answer while down': 'down' };
    const res = await ctx.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'answer while down'), feedbackEvent(3, 'e2', 'negative')], {
        externalSessionId: 'down',
      }),
    );
    const sessionId = res.body.sessionId as string;
    const during = await eventually(
      async () => ({ s: await ctx.session(sessionId), o: await ctx.outcome(sessionId), c: calls.length }),
      (x) => x.s.processed_through_sequence === 3 && x.o.explicit === 1 && x.c >= 2,
    );
    assert.deepEqual([during.o.units, during.o.explicit, during.o.queued, during.o.done], [1, 1, 1, 0]);
    assert.equal(during.s.processing_status, 'pending', 'an outage is not a billing problem');
    // More events are processed while the provider is still down.
    await ctx.ingest(app, sessionRequest(app, [feedbackEvent(4, 'e2', 'positive')], { externalSessionId: 'down' }));
    await eventually(
      () => ctx.outcome(sessionId),
      (o) => o.explicit === 2,
    );
    assert.equal((await ctx.outcome(sessionId)).explicit, 2);
    mode = {};
    await eventually(
      () => ctx.outcome(sessionId),
      (o) => o.done === 1,
      30_000,
    );
    assert.deepEqual(await jobs(sessionId), [{ status: 'done', error_code: null, credits_spent: 1 }]);
  });

  it('an answer that is never the expected JSON fails that analysis after three attempts', async () => {
    mode = { 'garbled answer': 'garbage' };
    const res = await ctx.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'q'), assistantMessage(2, 'garbled answer')], { externalSessionId: 'garbage', status: 'ended' }),
    );
    const sessionId = res.body.sessionId as string;
    await ctx.processedThrough(sessionId, 2);
    assert.deepEqual(await jobs(sessionId), [{ status: 'failed', error_code: 'invalid_response', credits_spent: 0 }]);
    assert.equal(calls.filter((c) => c.response === 'garbled answer').length, 3);
    const attempts = await ctx.pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT attempts AS n FROM agent_analysis_jobs WHERE session_id = ${sessionId}`,
    );
    assert.equal(attempts, 3);
  });
});
