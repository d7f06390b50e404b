import { strict as assert } from 'node:assert';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentContext, sessionRequest, userMessage, type AgentContext } from '../../../harness/agents.js';
import { createTestKey, createTestOrg, createTestUser } from '../../../harness/fixtures.js';

/** REST management of agent applications and credentials: admin users and admin-scoped keys. */
describe('agent applications REST', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let admin: Record<string, string>;
  const base = '/v3/rest/agent-applications';

  before(async () => {
    t = await agentContext();
    admin = { 'X-Service-Api-Key': t.org.apiKey };
  });
  after(async () => t?.close());

  const call = (method: string, path: string, json?: unknown, headers = admin) => t.api.request(path, { method, headers, json });

  it('creates with settings, reads, lists, updates, and deletes an application', async () => {
    const user = await createTestUser(t.pool, t.org.organizationId);
    const created = await call('POST', base, {
      name: 'Helpdesk',
      agentKey: 'helpdesk',
      contentCapture: true,
      redactedFieldNames: ['email'],
      retentionDays: 90,
      allowedEnvironments: ['production'],
      conversationAccess: { type: 'users', userIds: [user.userId] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.headers.get('location'), `${base}/${created.body.applicationId}`);
    assert.deepEqual(
      [
        created.body.agentKey,
        created.body.status,
        created.body.retentionDays,
        created.body.allowedEnvironments,
        created.body.conversationAccess,
      ],
      ['helpdesk', 'active', 90, ['production'], { type: 'users', userIds: [user.userId] }],
    );
    const id = created.body.applicationId as string;
    assert.deepEqual((await call('GET', `${base}/${id}`)).body, created.body);
    const list = await call('GET', `${base}?limit=100`);
    assert.ok(list.body.applications.some((a: { applicationId: string }) => a.applicationId === id));

    const patched = await call('PATCH', `${base}/${id}`, { status: 'disabled', retentionDays: null, redactedTextPatterns: ['ACME-42'] });
    assert.equal(patched.status, 200);
    assert.deepEqual(
      [patched.body.status, patched.body.retentionDays, patched.body.redactedTextPatterns, patched.body.redactedFieldNames],
      ['disabled', null, ['ACME-42'], ['email']],
    );

    assert.equal((await call('DELETE', `${base}/${id}`)).status, 204);
    assert.equal((await call('GET', `${base}/${id}`)).status, 404);
    assert.equal((await call('DELETE', `${base}/${id}`)).status, 404);
    const again = await call('POST', base, { name: 'Helpdesk 2', agentKey: 'helpdesk' });
    assert.equal(again.status, 201, 'the key of a deleted application is free again');
  });

  it('concurrent PATCHes of different settings: none is lost (each change reads what it rewrites under the row lock)', async () => {
    const created = await call('POST', base, { name: 'Concurrent', agentKey: 'concurrent-patches' });
    const id = created.body.applicationId as string;
    for (let round = 0; round < 30; round++) {
      const [a, b, c] = await Promise.all([
        call('PATCH', `${base}/${id}`, { name: `name ${round}` }),
        call('PATCH', `${base}/${id}`, { retentionDays: 10 + round }),
        call('PATCH', `${base}/${id}`, { redactedTextPatterns: [`secret-${round}`] }),
      ]);
      assert.deepEqual([a.status, b.status, c.status], [200, 200, 200]);
      const now = (await call('GET', `${base}/${id}`)).body;
      assert.deepEqual(
        [now.name, now.retentionDays, now.redactedTextPatterns],
        [`name ${round}`, 10 + round, [`secret-${round}`]],
        `round ${round}`,
      );
    }
  });

  it('credentials: created with a secret shown once, listed without it, revoked (repeat is harmless)', async () => {
    const app = (await call('POST', base, { name: 'Creds', agentKey: 'creds' })).body;
    const cred = await call('POST', `${base}/${app.applicationId}/credentials`);
    assert.equal(cred.status, 201);
    assert.equal(cred.headers.get('cache-control'), 'no-store');
    assert.match(cred.body.secret, /^iak_/);
    const stored = await t.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM agent_credentials WHERE secret_hash = sha256(convert_to(${cred.body.secret as string}, 'UTF8'))`);
    assert.equal(stored, 1, 'only the hash is stored');
    const listed = await call('GET', `${base}/${app.applicationId}/credentials`);
    assert.equal(listed.body.credentials.length, 1);
    assert.equal(listed.body.credentials[0].secret, undefined);
    const ok = await t.ingest({ secret: cred.body.secret } as never, sessionRequest({ agentKey: 'creds' } as never, [userMessage(1, 'x')]));
    assert.equal(ok.status, 202);
    const revoked = await call('DELETE', `${base}/${app.applicationId}/credentials/${cred.body.credentialId}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revokedAt);
    const repeat = await call('DELETE', `${base}/${app.applicationId}/credentials/${cred.body.credentialId}`);
    assert.equal(repeat.body.revokedAt, revoked.body.revokedAt);
  });

  it('validates every setting: retention 1..3650 or null, environments, access users, unknown properties', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'x', agentKey: 'r1', retentionDays: 0 }, 'body.retentionDays'],
      [{ name: 'x', agentKey: 'r2', retentionDays: 3651 }, 'body.retentionDays'],
      [{ name: 'x', agentKey: 'has space' }, 'body.agentKey'],
      [{ name: 'x', agentKey: 'r3', allowedEnvironments: ['prod env'] }, 'body.allowedEnvironments.0'],
      [{ name: 'x', agentKey: 'r4', conversationAccess: { type: 'users', userIds: [] } }, 'body.conversationAccess'],
      [
        { name: 'x', agentKey: 'r5', conversationAccess: { type: 'users', userIds: ['00000000-0000-4000-8000-000000000000'] } },
        'body.conversationAccess.userIds.0',
      ],
      [{ name: 'x', agentKey: 'r6', color: 'blue' }, 'body.color'],
      [{ agentKey: 'r7' }, 'body.name'],
    ];
    for (const [body, path] of cases) {
      const res = await call('POST', base, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.errorCode, 'validation_failed');
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path === path),
        `${path} in ${JSON.stringify(res.body.errors)}`,
      );
    }
    const stored = await t.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM agent_applications WHERE agent_key LIKE 'r%'`);
    assert.equal(stored, 0, 'a refused create stores nothing, also when it fails after the insert');
    const retention = await call('POST', base, { name: 'x', agentKey: 'r-ok', retentionDays: 3650 });
    assert.equal(retention.status, 201);
  });

  it('409 agent_key_taken for a duplicate key in the organization; another organization may use it', async () => {
    await call('POST', base, { name: 'Dup', agentKey: 'dup' });
    const dup = await call('POST', base, { name: 'Dup', agentKey: 'dup' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errorCode, 'agent_key_taken');
    const other = await createTestOrg(t.pool);
    assert.equal((await call('POST', base, { name: 'Dup', agentKey: 'dup' }, { 'X-Service-Api-Key': other.apiKey })).status, 201);
  });

  it('admin only: 401 without credentials, 403 for members and keys without admin, 404 across organizations', async () => {
    const app = (await call('POST', base, { name: 'Guarded', agentKey: 'guarded' })).body;
    assert.equal((await call('GET', base, undefined, {})).status, 401);
    const member = await createTestUser(t.pool, t.org.organizationId, 'member');
    const memberRes = await call('GET', base, undefined, { Authorization: `Bearer ${member.accessToken}` });
    assert.equal(memberRes.status, 403);
    assert.equal(memberRes.body.errorCode, 'insufficient_scope');
    const narrow = await createTestKey(t.pool, t.org.organizationId, ['agents:read']);
    assert.equal((await call('POST', base, { name: 'n', agentKey: 'n' }, { 'X-Service-Api-Key': narrow.apiKey })).status, 403);
    const adminUser = await createTestUser(t.pool, t.org.organizationId, 'admin');
    assert.equal(
      (await call('GET', `${base}/${app.applicationId}`, undefined, { Authorization: `Bearer ${adminUser.accessToken}` })).status,
      200,
    );
    const other = await createTestOrg(t.pool);
    const foreign = { 'X-Service-Api-Key': other.apiKey };
    assert.equal((await call('GET', `${base}/${app.applicationId}`, undefined, foreign)).status, 404);
    assert.equal((await call('PATCH', `${base}/${app.applicationId}`, { status: 'disabled' }, foreign)).status, 404);
    assert.equal((await call('POST', `${base}/${app.applicationId}/credentials`, undefined, foreign)).status, 404);
  });
});
