import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { addCredits } from '../../../src/db/repositories/organizations.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

/** What the console's admin pages list (issue 36): the organization's users and its credit ledger. */
describe('organization lists: users and the credit ledger (admin)', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let other: TestOrg;
  let admin: Awaited<ReturnType<typeof createTestUser>>;
  let member: Awaited<ReturnType<typeof createTestUser>>;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    org = await createTestOrg(pool, { credits: 100 });
    other = await createTestOrg(pool, { credits: 7 });
    admin = await createTestUser(pool, org.organizationId, 'admin');
    member = await createTestUser(pool, org.organizationId);
    await createTestUser(pool, other.organizationId);
    await pool.transaction((tx) => addCredits(tx, org.organizationId, 50, 'top-up by the operator'));
    await pool.transaction((tx) => addCredits(tx, org.organizationId, -3, 'analysis of 3 responses'));
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const get = (path: string, headers: Record<string, string>) => api.request(path, { headers });
  const bearer = (u: { accessToken: string }) => ({ Authorization: `Bearer ${u.accessToken}` });

  it("lists the organization's users, oldest first, page by page; no other organization's", async () => {
    const all = await get('/v3/rest/users', bearer(admin));
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.users.map((u: { email: string; role: string }) => [u.email, u.role]),
      [
        [admin.email, 'admin'],
        [member.email, 'member'],
      ],
    );
    assert.deepEqual(Object.keys(all.body.users[0]).sort(), ['createdAt', 'email', 'firstName', 'lastName', 'role', 'status', 'userId']);
    const first = await get('/v3/rest/users?limit=1', { 'X-Service-Api-Key': org.apiKey });
    assert.deepEqual([first.body.users.length, first.body.has_more, first.body.page], [1, true, 1]);
    const second = await get('/v3/rest/users?limit=1&page=2', { 'X-Service-Api-Key': org.apiKey });
    assert.deepEqual([second.body.users[0].email, second.body.has_more], [member.email, false]);
  });

  it('lists the credit ledger newest first, each line with the balance after it', async () => {
    const res = await get('/v3/rest/organization/credit-transactions', bearer(admin));
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.transactions.map((t: { amount: number; reason: string; balanceAfter: number }) => [t.amount, t.reason, t.balanceAfter]),
      [
        [-3, 'analysis of 3 responses', 147],
        [50, 'top-up by the operator', 150],
        [100, 'initial', 100],
      ],
    );
    assert.equal(typeof res.body.transactions[0].transactionId, 'number');
    assert.ok(!Number.isNaN(Date.parse(res.body.transactions[0].createdAt)));
    const page = await get('/v3/rest/organization/credit-transactions?limit=2&page=2', bearer(admin));
    assert.deepEqual([page.body.transactions.length, page.body.has_more], [1, false]);
  });

  it('is for admins: a member gets 403 insufficient_scope, no credential 401, a bad page 400', async () => {
    for (const path of ['/v3/rest/users', '/v3/rest/organization/credit-transactions']) {
      const forbidden = await get(path, bearer(member));
      assert.equal(forbidden.status, 403, path);
      assert.deepEqual(forbidden.body, {
        message: "The credential lacks the 'admin' scope.",
        errorCode: 'insufficient_scope',
        requiredScope: 'admin',
      });
      const anonymous = await get(path, {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.errorCode, 'unauthenticated');
      const bad = await get(`${path}?limit=1000`, bearer(admin));
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body.errors, [{ path: 'query.limit', message: 'must be <= 100' }]);
    }
  });
});
