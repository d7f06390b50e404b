import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { purgeExpiredModels } from '../../../src/db/repositories/oauth-models.js';
import { postgresAdapter } from '../../../src/oauth/adapter.js';
import { createTestDatabase } from '../../../harness/stack.js';

/** oidc-provider's storage contract, on the real table (migration 0017). */
describe('OAuth storage in PostgreSQL (the oidc-provider adapter)', function () {
  this.timeout(30_000);
  let pool: DatabasePool;
  let Adapter: ReturnType<typeof postgresAdapter>;
  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    Adapter = postgresAdapter(pool);
  });
  after(async () => pool?.end());

  it('stores, replaces and finds instances per model; an id of another model is not found', async () => {
    const clients = new Adapter('Client');
    await clients.upsert('client-1', { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/callback'] });
    assert.deepEqual(await clients.find('client-1'), { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/callback'] });
    await clients.upsert('client-1', { client_id: 'client-1', redirect_uris: ['http://localhost/callback'] });
    assert.deepEqual((await clients.find('client-1'))?.redirect_uris, ['http://localhost/callback']);
    assert.equal(await new Adapter('AccessToken').find('client-1'), undefined);
    await clients.destroy('client-1');
    assert.equal(await clients.find('client-1'), undefined);
  });

  it('finds sessions by uid and device codes by user code; an expired instance is not found, and is purged', async () => {
    const sessions = new Adapter('Session');
    await sessions.upsert('s1', { uid: 'uid-1', accountId: 'u' }, 60);
    assert.equal((await sessions.findByUid('uid-1'))?.accountId, 'u');
    const codes = new Adapter('DeviceCode');
    await codes.upsert('d1', { userCode: 'ABCD-EFGH' }, 60);
    assert.equal((await codes.findByUserCode('ABCD-EFGH'))?.userCode, 'ABCD-EFGH');
    await sessions.upsert('s2', { uid: 'uid-2' }, 1);
    await sleep(1100);
    assert.equal(await sessions.find('s2'), undefined);
    assert.equal(await sessions.findByUid('uid-2'), undefined);
    assert.ok((await purgeExpiredModels(pool, 100)) >= 1);
    const left = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM oauth_models WHERE id = 's2'`);
    assert.equal(left, 0);
  });

  it('a consumed code is still found, marked consumed (its reuse is refused and revokes the grant)', async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('code-1', { grantId: 'g1', accountId: 'u' }, 60);
    assert.equal((await codes.find('code-1'))?.consumed, undefined);
    await codes.consume('code-1');
    const consumed = await codes.find('code-1');
    assert.equal(typeof consumed?.consumed, 'number');
    assert.ok(Math.abs((consumed!.consumed as number) - Date.now() / 1000) < 60);
  });

  it('revoking a grant removes everything issued under it, and nothing else', async () => {
    await new Adapter('Grant').upsert('g2', { accountId: 'u', clientId: 'c' }, 600);
    await new Adapter('AccessToken').upsert('at-1', { grantId: 'g2' }, 600);
    await new Adapter('RefreshToken').upsert('rt-1', { grantId: 'g2' }, 600);
    await new Adapter('AccessToken').upsert('at-2', { grantId: 'g3' }, 600);
    await new Adapter('AccessToken').revokeByGrantId('g2');
    assert.equal(await new Adapter('AccessToken').find('at-1'), undefined);
    assert.equal(await new Adapter('RefreshToken').find('rt-1'), undefined);
    assert.equal(await new Adapter('AccessToken').find('at-2').then((p) => p?.grantId), 'g3');
  });
});
