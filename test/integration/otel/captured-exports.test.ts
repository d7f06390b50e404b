import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import type { CapturedExport } from '../../otel-matrix/capture.js';
import { agentSessionOf, CHAT_PY_CONVERSATION } from '../../helpers/otel.js';

const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'otel');

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
      const session = await agentSessionOf(t.api, { apiKey: t.org.apiKey, applicationId: app.app.id }, captured.conversation);
      assert.ok(session, `no session ${captured.conversation}`);
      assert.deepEqual(
        session.events.map((e) => [e.type, e.content]),
        CHAT_PY_CONVERSATION,
      );
    });
  }
});
