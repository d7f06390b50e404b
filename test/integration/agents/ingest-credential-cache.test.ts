import { strict as assert } from 'node:assert';
import { revokeCredential } from '../../../src/db/repositories/agent-applications.js';
import { agentContext, sessionRequest, userMessage, type AgentContext } from '../../helpers/agents.js';
import { eventually } from '../../helpers/wait.js';

/**
 * AGENT_CREDENTIAL_CACHE_SECONDS: an API process reuses an ingest secret's lookup for that long (one
 * statement less per ingest), and a revocation made anywhere takes effect within it.
 */
describe('agent ingest: the ingest-secret lookup cache', function () {
  this.timeout(60_000);
  let t: AgentContext;
  before(async () => {
    t = await agentContext({ env: { AGENT_CREDENTIAL_CACHE_SECONDS: '4' } });
  });
  after(async () => t?.close());

  it('reuses a lookup within the TTL, and honours a revocation once it passes', async () => {
    const app = await t.newApp();
    const send = (seq: number) => t.ingest(app, sessionRequest(app, [userMessage(seq, `m${seq}`)], { externalSessionId: 'cached' }));
    assert.equal((await send(1)).status, 202); // looked up, and kept
    const revokedAt = Date.now();
    assert.ok((await revokeCredential(t.pool, app.credentialId, { organizationId: null }))?.revoked_at);
    // Another process revoked it: this one still holds the lookup it made a moment ago.
    const cached = await send(2);
    assert.equal(cached.status, 202, 'the cached lookup is used within the TTL');
    const refused = await eventually(() => send(3), (r) => r.status === 401, 10_000);
    assert.deepEqual([refused.status, refused.body.errorCode], [401, 'credential_revoked']);
    assert.ok(Date.now() - revokedAt < 4_000 + 2_000, 'refused within the TTL (and a request)');
  });
});
