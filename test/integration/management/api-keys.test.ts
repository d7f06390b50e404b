import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { DEFAULT_API_KEY_SCOPES } from '../../../src/auth/scopes.js';
import { createDatabasePool } from '../../../src/db/pool.js';

const base = '/v3/rest/api-keys';
const KEY = /^ik_[A-Za-z0-9_-]{43}$/;

/** API keys, self-service over REST (issue 32, point 4): admins create, list and revoke them. */
describe('API keys REST', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let admin: Record<string, string>;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    org = await createTestOrg(pool);
    admin = { Authorization: `Bearer ${(await createTestUser(pool, org.organizationId, 'admin')).accessToken}` };
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const call = (method: string, path: string, headers: Record<string, string>, json?: unknown) =>
    api.request(path, { method, headers, json });
  const keyCount = () =>
    pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = ${org.organizationId}`,
    );

  it('creates a key shown once, which works, and lists it with its last use but never the key', async () => {
    const res = await call('POST', base, admin, { name: 'CRM sync', scopes: ['feedback:read', 'signals:read'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get('location'), `${base}/${res.body.apiKeyId}`);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { apiKey, apiKeyId, createdAt, displayPrefix, ...rest } = res.body as Record<string, string>;
    assert.match(apiKey!, KEY);
    assert.ok(apiKey!.startsWith(displayPrefix!), 'the prefix recognises the key');
    assert.ok(!Number.isNaN(Date.parse(createdAt!)));
    assert.deepEqual(rest, {
      organizationId: org.organizationId,
      name: 'CRM sync',
      scopes: ['feedback:read', 'signals:read'],
      lastUsedAt: null,
      revokedAt: null,
    });

    // The key works with its scopes, and only those.
    const used = await call('GET', '/v3/rest/signals', { 'X-Service-Api-Key': apiKey! });
    assert.equal(used.status, 200, JSON.stringify(used.body));
    const denied = await call('GET', '/v3/rest/agent-conversations/sessions', { 'X-Service-Api-Key': apiKey! });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.errorCode, 'insufficient_scope');

    const one = await call('GET', `${base}/${apiKeyId}`, admin);
    assert.equal(one.status, 200);
    assert.equal(one.body.apiKey, undefined, 'the key is never shown again');
    assert.ok(!Number.isNaN(Date.parse(one.body.lastUsedAt)), 'last use recorded');

    const list = await call('GET', `${base}?limit=100`, admin);
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.body).sort(), ['apiKeys', 'has_more', 'limit', 'page']);
    const listed = (list.body.apiKeys as Record<string, unknown>[]).find((k) => k.apiKeyId === apiKeyId);
    assert.deepEqual(listed, one.body);
    assert.ok((list.body.apiKeys as Record<string, unknown>[]).every((k) => !('apiKey' in k)));
    assert.ok(!JSON.stringify(list.body).includes(apiKey!));
  });

  it('gives a new key, by default, every data scope its creator holds', async () => {
    const res = await call('POST', base, admin, {});
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.scopes, DEFAULT_API_KEY_SCOPES);
    assert.equal(res.body.name, null);
  });

  it('refuses scopes the creator does not hold (403 scope_not_held) and stores nothing', async () => {
    // An admin key without webhooks:manage cannot make a key with it.
    const adminKey = { 'X-Service-Api-Key': (await createTestKey(pool, org.organizationId, ['admin', 'feedback:read'])).apiKey };
    const before = await keyCount();
    const res = await call('POST', base, adminKey, { scopes: ['feedback:read', 'webhooks:manage'] });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      message: 'An API key may be given only scopes the credential that creates it holds.',
      errorCode: 'scope_not_held',
      missingScopes: ['webhooks:manage'],
    });
    // By default only the data scopes it holds.
    const plain = await call('POST', base, adminKey, {});
    assert.equal(plain.status, 201);
    assert.deepEqual(plain.body.scopes, ['feedback:read']);
    assert.equal(await keyCount(), before + 1);
  });

  it('is for admins only: members and keys without admin get 403 insufficient_scope', async () => {
    const member = { Authorization: `Bearer ${(await createTestUser(pool, org.organizationId, 'member')).accessToken}` };
    const dataKey = { 'X-Service-Api-Key': (await createTestKey(pool, org.organizationId, DEFAULT_API_KEY_SCOPES)).apiKey };
    for (const headers of [member, dataKey]) {
      for (const [method, path] of [
        ['GET', base],
        ['POST', base],
        ['DELETE', `${base}/${org.apiKeyId}`],
      ] as const) {
        const res = await call(method, path, headers, method === 'POST' ? {} : undefined);
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.body.errorCode, 'insufficient_scope');
        assert.equal(res.body.requiredScope, 'admin');
      }
    }
    const anonymous = await call('GET', base, {});
    assert.equal(anonymous.status, 401);
  });

  it('rejects unknown scopes and fields (400 validation_failed)', async () => {
    const before = await keyCount();
    for (const json of [{ scopes: ['root'] }, { scopes: [] }, { scopes: ['admin', 'admin'] }, { name: '' }, { owner: 'x' }]) {
      const res = await call('POST', base, admin, json);
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.errorCode, 'validation_failed');
      assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0);
    }
    assert.equal(await keyCount(), before);
  });

  it('revokes a key at once; revoking again is 204; unknown and other organizations’ keys are 404', async () => {
    const created = await call('POST', base, admin, { scopes: ['feedback:read'] });
    const headers = { 'X-Service-Api-Key': created.body.apiKey as string };
    assert.equal((await call('GET', '/v3/rest/organization', headers)).status, 200);

    const revoked = await call('DELETE', `${base}/${created.body.apiKeyId}`, admin);
    assert.equal(revoked.status, 204);
    const after = await call('GET', '/v3/rest/organization', headers);
    assert.equal(after.status, 401);
    const shown = await call('GET', `${base}/${created.body.apiKeyId}`, admin);
    assert.ok(!Number.isNaN(Date.parse(shown.body.revokedAt)));

    const again = await call('DELETE', `${base}/${created.body.apiKeyId}`, admin);
    assert.equal(again.status, 204);
    assert.equal(
      (await call('GET', `${base}/${created.body.apiKeyId}`, admin)).body.revokedAt,
      shown.body.revokedAt,
      'the first revocation time stays',
    );

    const other = await createTestOrg(pool);
    for (const id of [other.apiKeyId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      for (const method of ['GET', 'DELETE']) {
        const res = await call(method, `${base}/${id}`, admin);
        assert.equal(res.status, 404, `${method} ${id}`);
        assert.deepEqual(res.body, { message: 'API key not found.', errorCode: 'not_found', resource: 'API key' });
      }
    }
    // The other organization's key still works.
    assert.equal((await call('GET', '/v3/rest/organization', { 'X-Service-Api-Key': other.apiKey })).status, 200);
  });

  it('replays a create retried with the same Idempotency-Key: one key', async () => {
    const before = await keyCount();
    const headers = { ...admin, 'Idempotency-Key': 'make-key-1' };
    const first = await call('POST', base, headers, { name: 'retry' });
    const second = await call('POST', base, headers, { name: 'retry' });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.deepEqual(second.body, first.body);
    assert.equal(await keyCount(), before + 1);
  });
});
