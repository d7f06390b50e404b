import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import type { CapturedExport } from '../../otel-matrix/capture.js';

const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'otel');

/** The conversation test/otel-matrix/chat.py has with its fake OpenAI server, whatever the instrumentation. */
const EXPECTED = [
  ['user_message', 'Where is my parcel?'],
  ['assistant_message', 'Answer to: Where is my parcel?'],
  ['user_message', 'Can it come on Friday?'],
  ['assistant_message', 'Answer to: Can it come on Friday?'],
];

/**
 * Exports captured from instrumentations too heavy to install in every CI run
 * (test/otel-matrix/capture.ts), replayed byte for byte to the stack: each gives chat.py's
 * conversation, the system prompt left out.
 */
describe('OTLP ingest: exports captured from PyPI instrumentations, replayed as sent (issue 35, compatibility matrix)', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => {
    await t?.close();
  });

  const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
  it('has fixtures to replay', () => {
    assert.ok(fixtures.includes('semantic-kernel.json'), fixtures.join(', '));
  });
  for (const file of fixtures) {
    const captured = JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as CapturedExport;
    it(`${captured.emitter} (${file})`, async () => {
      for (const r of captured.requests) {
        const res = await fetch(`${t.api.url}/otel${r.path}`, {
          method: 'POST',
          body: Buffer.from(r.bodyBase64, 'base64'),
          headers: { 'Content-Type': r.contentType, 'X-Service-Agent-Key': app.secret },
        });
        assert.equal(res.status, 200, `${r.path}: ${await res.text()}`);
      }
      const list = await t.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${app.app.id}&limit=100`, {
        headers: { 'X-Service-Api-Key': t.org.apiKey },
      });
      const found = (list.body.sessions as { sessionId: string; externalSessionId: string }[]).find(
        (s) => s.externalSessionId === captured.conversation,
      );
      assert.ok(found, `no session ${captured.conversation}`);
      const detail = await t.api.request(`/v3/rest/agent-conversations/sessions/${found.sessionId}`, {
        headers: { 'X-Service-Api-Key': t.org.apiKey },
      });
      assert.deepEqual(
        (detail.body.events as { type: string; content: string }[]).map((e) => [e.type, e.content]),
        EXPECTED,
      );
    });
  }
});
