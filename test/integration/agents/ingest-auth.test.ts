import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { updateOrganizationFlags } from '../../../src/db/repositories/organizations.js';
import { deleteApplication, revokeCredential } from '../../../src/db/repositories/agent-applications.js';
import { changeApplication } from '../../../src/agents/applications.js';
import { agentContext, countRows, sessionRequest, userMessage, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { createTestOrg } from '../../../harness/fixtures.js';

/** Spec "Agent chat ingest" errors 401, 403, 404: who may send, decided before anything is stored. */
describe('agent ingest: authentication and application state', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let app: TestAgentApp;
  const body = () => sessionRequest(app, [userMessage(1, 'hello')]);

  before(async () => {
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => t?.close());

  it('accepts a valid secret with its own agentKey: 202', async () => {
    const res = await t.ingest(app, body());
    assert.equal(res.status, 202);
    assert.match(res.body.sessionId, /^[0-9a-f-]{36}$/);
    assert.equal(res.body.acceptedEventCount, 1);
  });

  it('401 unauthenticated without X-Service-Agent-Key', async () => {
    const res = await t.ingest(null, body());
    assert.equal(res.status, 401);
    assert.equal(res.body.errorCode, 'unauthenticated');
    assert.match(res.body.message, /X-Service-Agent-Key/);
  });

  it('401 invalid_credentials for an unknown secret', async () => {
    const res = await t.ingest(null, body(), { 'X-Service-Agent-Key': 'iak_not-a-real-secret' });
    assert.equal(res.status, 401);
    assert.deepEqual(
      { errorCode: res.body.errorCode, message: res.body.message },
      { errorCode: 'invalid_credentials', message: 'The ingest secret is not valid.' },
    );
  });

  it('401 for an organization API key or a user token instead of the ingest secret', async () => {
    const res = await t.ingest(null, body(), { 'X-Service-Api-Key': t.org.apiKey });
    assert.equal(res.status, 401);
    assert.equal(res.body.errorCode, 'unauthenticated');
  });

  it('401 invalid_credentials when the secret belongs to another application than agentKey', async () => {
    const other = await t.newApp();
    const res = await t.ingest(other, body());
    assert.equal(res.status, 401);
    assert.equal(res.body.errorCode, 'invalid_credentials');
    assert.match(res.body.message, /does not belong to the application/);
  });

  it('401 credential_revoked for a revoked secret, and the other secrets of the application still work', async () => {
    const a = await t.newApp();
    const revoked = await revokeCredential(t.pool, a.credentialId, { organizationId: null });
    assert.ok(revoked?.revoked_at);
    const res = await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')]));
    assert.equal(res.status, 401);
    assert.equal(res.body.errorCode, 'credential_revoked');
  });

  it('404 not_found when the application was deleted; 401 still wins for a mismatched key', async () => {
    const a = await t.newApp();
    await deleteApplication(t.pool, t.org.organizationId, a.app.id);
    const res = await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')]));
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { message: 'Agent application not found.', errorCode: 'not_found', resource: 'Agent application' });
    const mismatched = await t.ingest(a, sessionRequest(app, [userMessage(1, 'x')]));
    assert.equal(mismatched.status, 401);
  });

  it('404 agent_chats_not_enabled when the organization has agent chats off; unauthenticated callers still get 401', async () => {
    const org = await createTestOrg(t.pool);
    const a = await t.newApp(undefined, org);
    await updateOrganizationFlags(t.pool, org.organizationId, { agentChatsEnabled: false });
    const res = await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')]));
    assert.equal(res.status, 404);
    assert.equal(res.body.errorCode, 'agent_chats_not_enabled');
    assert.equal((await t.ingest(null, sessionRequest(a, [userMessage(1, 'x')]), { 'X-Service-Agent-Key': 'iak_wrong' })).status, 401);
  });

  it('403 application_disabled for a disabled application; enabling it again accepts uploads', async () => {
    const a = await t.newApp({ status: 'disabled' });
    const res = await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')]));
    assert.equal(res.status, 403);
    assert.equal(res.body.errorCode, 'application_disabled');
    await changeApplication(t.pool, t.org.organizationId, a.app.id, { status: 'active' });
    assert.equal((await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')]))).status, 202);
  });

  it('stores nothing for any refused request', async () => {
    const before = await countRows(t.pool, 'agent_events');
    const a = await t.newApp({ status: 'disabled' });
    await t.ingest(a, sessionRequest(a, [userMessage(1, 'x')], { externalSessionId: 'refused' }));
    await t.ingest(null, sessionRequest(a, [userMessage(1, 'x')], { externalSessionId: 'refused' }));
    assert.equal(await countRows(t.pool, 'agent_events'), before);
    const sessions = await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM agent_sessions WHERE external_session_id = 'refused'`);
    assert.equal(sessions, 0);
  });

  it('never logs the ingest secret', async () => {
    await t.ingest(app, body());
    assert.ok(t.api.logs.length > 0);
    assert.ok(!t.api.logs.join('\n').includes(app.secret));
  });
});
