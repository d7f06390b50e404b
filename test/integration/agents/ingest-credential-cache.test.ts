import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { changeApplication } from '../../../src/agents/applications.js';
import { deleteApplication, revokeCredential } from '../../../src/db/repositories/agent-applications.js';
import { agentContext, sessionRequest, userMessage, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';

/**
 * AGENT_CREDENTIAL_CACHE_SECONDS: an API process reuses an ingest secret's lookup (one statement
 * less per ingest), yet a change answered 200 anywhere (another replica, the CLI) applies to the very
 * next ingest: the ingest's transaction reads the lookup's stamp again and starts over from a fresh
 * lookup when it moved. A long TTL here, so that a cached lookup would still be in use.
 */
describe('agent ingest: the ingest-secret lookup cache never applies a change late', function () {
  this.timeout(60_000);
  let t: AgentContext;
  before(async () => {
    t = await agentContext({ env: { AGENT_CREDENTIAL_CACHE_SECONDS: '60' } });
  });
  after(async () => t?.close());

  const send = (app: TestAgentApp, seq: number, text = `m${seq}`, extra = {}) =>
    t.ingest(app, sessionRequest(app, [userMessage(seq, text)], { externalSessionId: 'cached', ...extra }));
  const payloads = (sessionId: string) =>
    t.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`
    SELECT payload FROM agent_events WHERE session_id = ${sessionId} ORDER BY sequence`);

  it('a revocation refuses the next ingest at once (401 credential_revoked)', async () => {
    const app = await t.newApp();
    assert.equal((await send(app, 1)).status, 202); // looked up, and kept
    assert.ok((await revokeCredential(t.pool, app.credentialId, { organizationId: null }))?.revoked_at);
    const refused = await send(app, 2);
    assert.deepEqual([refused.status, refused.body.errorCode], [401, 'credential_revoked']);
  });

  it('content capture turned off stores no content from the next ingest on', async () => {
    const app = await t.newApp();
    const first = await send(app, 1, 'kept while capture is on');
    assert.equal(first.status, 202);
    await changeApplication(t.pool, t.org.organizationId, app.app.id, { contentCapture: false });
    const next = await send(app, 2, 'must not be stored');
    assert.deepEqual([next.status, next.body.processingStatus], [202, 'capture_disabled']);
    assert.deepEqual(
      (await payloads(first.body.sessionId)).filter((p) => p !== null),
      [],
    );
  });

  it('a redacted field name removes the field from the next ingest', async () => {
    const app = await t.newApp();
    const context = { productArea: 'billing', entityId: 'acct-42' };
    assert.equal((await send(app, 1, 'hello', { context })).status, 202);
    await changeApplication(t.pool, t.org.organizationId, app.app.id, { redactedFieldNames: ['entityId'] });
    const next = await send(app, 2, 'again', { context });
    assert.equal(next.status, 202);
    const stored = await t.pool.oneFirst(
      sql.type(z.object({ context: z.any() }))`SELECT context FROM agent_sessions WHERE id = ${next.body.sessionId}`,
    );
    assert.deepEqual(stored, { productArea: 'billing' });
  });

  it('disabling and deleting the application refuse the next ingest at once (403, then 404)', async () => {
    const app = await t.newApp();
    assert.equal((await send(app, 1)).status, 202);
    await changeApplication(t.pool, t.org.organizationId, app.app.id, { status: 'disabled' });
    const disabled = await send(app, 2);
    assert.deepEqual([disabled.status, disabled.body.errorCode], [403, 'application_disabled']);
    await changeApplication(t.pool, t.org.organizationId, app.app.id, { status: 'active' });
    assert.equal((await send(app, 2)).status, 202);
    await deleteApplication(t.pool, t.org.organizationId, app.app.id);
    const deleted = await send(app, 3);
    assert.equal(deleted.status, 404);
  });
});
