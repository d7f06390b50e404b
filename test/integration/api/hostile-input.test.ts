import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import { MAX_JSON_DEPTH, MAX_REPORTED_ERRORS } from '../../../api/validation.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../helpers/app.js';
import { createTestOrg, type TestOrg } from '../../helpers/fixtures.js';
import { createTestDatabase } from '../../helpers/stack.js';

/** Bodies built to hurt the validator: deep nesting and huge lists of bad values get a bounded 400. */
describe('hostile input', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const recordings = () => pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM recordings`);
  /** Raw text: some bodies here are too deep for JSON.stringify. */
  const post = (body: string) => fetch(`${api.url}/v3/rest/recordings`, {
    method: 'POST', headers: { 'X-Service-Api-Key': org.apiKey, 'content-type': 'application/json' }, body,
  });

  it('100,000 levels of nested arrays in a free-form value: 400 naming the depth, not a stack overflow (500)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const res = await post(`{"record":{"externalId":"deep","values":[{"fieldId":"00000000-0000-4000-8000-000000000000","value":${deep}}]}}`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as { errorCode: string; errors: { path: string; message: string }[] };
    assert.equal(body.errorCode, 'validation_failed');
    assert.equal(body.errors.length, 1);
    assert.match(body.errors[0]!.path, /^body\.record\.values\.0\.value(\.0)+$/);
    assert.equal(body.errors[0]!.message, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
    assert.equal(await recordings(), 0);
    assert.equal((await fetch(`${api.url}/healthz`)).status, 200);
  });

  it('a million invalid folderIds: a 400 with the first error, small and quick, and nothing stored', async () => {
    const res = await post(JSON.stringify({ record: { externalId: 'many' }, folderIds: new Array(1_000_000).fill(0) }));
    assert.equal(res.status, 400);
    const text = await res.text();
    assert.ok(text.length < 2_000, `a ${text.length}-byte answer`);
    const body = JSON.parse(text) as { errorCode: string; errors: unknown[] };
    assert.equal(body.errorCode, 'validation_failed');
    assert.ok(body.errors.length >= 1 && body.errors.length <= MAX_REPORTED_ERRORS);
    assert.equal(await recordings(), 0);
  });

  it(`an ordinary body with many errors lists every one up to ${MAX_REPORTED_ERRORS}`, async () => {
    const values = Array.from({ length: 60 }, (_, i) => ({ fieldId: `not-a-uuid-${i}`, value: i }));
    const res = await post(JSON.stringify({ record: { externalId: 'some', values } }));
    assert.equal(res.status, 400);
    const body = (await res.json()) as { errors: { path: string }[] };
    assert.equal(body.errors.length, MAX_REPORTED_ERRORS);
    assert.deepEqual(body.errors.slice(0, 2).map((e) => e.path), ['body.record.values.0.fieldId', 'body.record.values.1.fieldId']);
  });
});
