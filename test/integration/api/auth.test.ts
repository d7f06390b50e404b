import { strict as assert } from 'node:assert';
import type { Server } from 'node:http';
import Koa from 'koa';
import type { AppState } from '../../../api/context.js';
import { authenticate } from '../../../api/middleware/auth.js';
import { errorHandler } from '../../../api/middleware/errors.js';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { revokeApiKey } from '../../../src/db/repositories/api-keys.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, testTokens, type TestApi } from '../../../harness/app.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

/** Every authentication outcome, against a real route: GET /v3/rest/users/{userId} (admin scope). */
describe('authentication and authorization', () => {
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let admin: { userId: string; accessToken: string };
  let other: TestOrg;
  let otherUser: { userId: string };

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    org = await createTestOrg(pool);
    admin = await createTestUser(pool, org.organizationId, 'admin');
    other = await createTestOrg(pool);
    otherUser = await createTestUser(pool, other.organizationId, 'admin');
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const userPath = (id: string) => `/v3/rest/users/${id}`;

  it('answers 401 unauthenticated without a credential, with a WWW-Authenticate header', async () => {
    const res = await api.request(userPath(admin.userId));
    assert.equal(res.status, 401);
    assert.equal(res.body.errorCode, 'unauthenticated');
    assert.match(res.body.message, /X-Service-Api-Key|Bearer/);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  it('answers 401 invalid_credentials for an unknown API key', async () => {
    const res = await api.request(userPath(admin.userId), { headers: { 'X-Service-Api-Key': 'ik_not-a-real-key' } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { message: 'The API key is not valid.', errorCode: 'invalid_credentials' });
  });

  it('answers 401 invalid_credentials for a malformed Authorization header and a forged token', async () => {
    const malformed = await api.request(userPath(admin.userId), { headers: { Authorization: 'Basic abc' } });
    assert.equal(malformed.status, 401);
    assert.equal(malformed.body.errorCode, 'invalid_credentials');
    const [h, p] = admin.accessToken.split('.');
    const forged = await api.request(userPath(admin.userId), { headers: { Authorization: `Bearer ${h}.${p}.AAAA` } });
    assert.equal(forged.status, 401);
    assert.deepEqual(forged.body, { message: 'The access token is not valid.', errorCode: 'invalid_credentials' });
  });

  it('answers 401 token_expired for an expired user token', async () => {
    const { accessToken } = await testTokens().issue(
      { id: admin.userId, organizationId: org.organizationId },
      60,
      new Date(Date.now() - 3_600_000),
    );
    const res = await api.request(userPath(admin.userId), { headers: { Authorization: `Bearer ${accessToken}` } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { message: 'The access token has expired.', errorCode: 'token_expired' });
  });

  it('answers 401 credential_revoked for a revoked API key, and for a disabled user', async () => {
    const key = await createTestKey(pool, org.organizationId, ['admin']);
    const before = await api.request(userPath(admin.userId), { headers: { 'X-Service-Api-Key': key.apiKey } });
    assert.equal(before.status, 200);
    await revokeApiKey(pool, key.apiKeyId);
    const res = await api.request(userPath(admin.userId), { headers: { 'X-Service-Api-Key': key.apiKey } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { message: 'The API key has been revoked.', errorCode: 'credential_revoked' });

    const user = await createTestUser(pool, org.organizationId, 'admin');
    await pool.query(sql.unsafe`UPDATE users SET status = 'disabled' WHERE id = ${user.userId}`);
    const disabled = await api.request(userPath(user.userId), { headers: { Authorization: `Bearer ${user.accessToken}` } });
    assert.equal(disabled.status, 401);
    assert.equal(disabled.body.errorCode, 'credential_revoked');
  });

  it('answers 403 insufficient_scope for a key without the scope, and for a member user', async () => {
    const key = await createTestKey(pool, org.organizationId, ['feedback:write']);
    const res = await api.request(userPath(admin.userId), { headers: { 'X-Service-Api-Key': key.apiKey } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      message: "The credential lacks the 'admin' scope.",
      errorCode: 'insufficient_scope',
      requiredScope: 'admin',
    });
    const member = await createTestUser(pool, org.organizationId, 'member');
    const asMember = await api.request(userPath(member.userId), { headers: { Authorization: `Bearer ${member.accessToken}` } });
    assert.equal(asMember.status, 403);
    assert.equal(asMember.body.errorCode, 'insufficient_scope');
  });

  it("answers 404 for another organization's id, exactly like an unknown one", async () => {
    const cross = await api.request(userPath(otherUser.userId), { headers: { 'X-Service-Api-Key': org.apiKey } });
    const unknown = await api.request(userPath('00000000-0000-4000-8000-000000000000'), { headers: { 'X-Service-Api-Key': org.apiKey } });
    const notUuid = await api.request(userPath('12345'), { headers: { 'X-Service-Api-Key': org.apiKey } });
    for (const res of [cross, unknown, notUuid]) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { message: 'User not found.', errorCode: 'not_found', resource: 'User' });
    }
  });

  it('accepts a valid API key and a valid admin token', async () => {
    const byKey = await api.request(userPath(admin.userId), { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(byKey.status, 200);
    assert.equal(byKey.body.userId, admin.userId);
    const byToken = await api.request(userPath(admin.userId), { headers: { Authorization: `Bearer ${admin.accessToken}` } });
    assert.equal(byToken.status, 200);
    assert.equal(byToken.body.role, 'admin');
  });

  it('never writes a credential to the logs', async () => {
    await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } });
    await api.request('/v3/rest/organization', { headers: { Authorization: `Bearer ${admin.accessToken}` } });
    await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': `${org.apiKey}x` } });
    const all = api.logs.join('\n');
    assert.ok(api.logs.length >= 3, 'requests are logged');
    assert.ok(!all.includes(org.apiKey), 'API key must not be logged');
    assert.ok(!all.includes(admin.accessToken), 'access token must not be logged');
  });
});

describe('credential kinds a route forbids or does not take', () => {
  let pool: DatabasePool;
  let server: Server;
  let url: string;
  let org: TestOrg;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    org = await createTestOrg(pool);
    const api = await startTestApi({ pool });
    // A route shaped like the spec's meeting-joins (users only, an API key is 403) and one like the
    // feedback area (API keys only: a user token is not a credential there, 401).
    const app = new Koa<AppState>();
    app.use(errorHandler());
    app.use(async (ctx, next) => {
      ctx.state.log = api.deps.logger;
      await next();
    });
    const usersOnly = authenticate(api.deps, { accept: ['user'], forbid: ['apiKey'] });
    const keysOnly = authenticate(api.deps, { accept: ['apiKey'] });
    app.use(async (ctx, next) => {
      const guard = ctx.path === '/users-only' ? usersOnly : keysOnly;
      await guard(ctx, async () => {
        ctx.body = { principal: ctx.state.principal?.kind };
      });
      await next();
    });
    await api.close();
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await pool?.end();
  });

  it('answers 403 principal_not_allowed to a valid API key where only users may call, 401 to a bad one', async () => {
    const res = await fetch(`${url}/users-only`, { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), {
      message: 'This operation requires a user access token (Authorization: Bearer).',
      errorCode: 'principal_not_allowed',
    });
    const bad = await fetch(`${url}/users-only`, { headers: { 'X-Service-Api-Key': 'ik_wrong' } });
    assert.equal(bad.status, 401);
    const user = await createTestUser(pool, org.organizationId);
    const ok = await fetch(`${url}/users-only`, { headers: { Authorization: `Bearer ${user.accessToken}` } });
    assert.deepEqual(await ok.json(), { principal: 'user' });
  });

  it('answers 401 unauthenticated to a user token where only API keys are taken', async () => {
    const user = await createTestUser(pool, org.organizationId);
    const res = await fetch(`${url}/keys-only`, { headers: { Authorization: `Bearer ${user.accessToken}` } });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), {
      message: 'Authentication required: send an organization API key (X-Service-Api-Key).',
      errorCode: 'unauthenticated',
    });
  });
});
