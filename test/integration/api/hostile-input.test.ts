import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { sql } from 'slonik';
import { z } from 'zod';
import { MAX_JSON_DEPTH, MAX_REPORTED_ERRORS } from '../../../api/validation.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createBodyChecker, type BodyChecker } from '../../../api/json-body.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

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
  const post = (body: string) =>
    fetch(`${api.url}/v3/rest/recordings`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey, 'content-type': 'application/json' },
      body,
    });

  it('100,000 levels of nested arrays in a free-form value: 400 naming the depth, not a stack overflow (500)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const res = await post(
      `{"record":{"externalId":"deep","values":[{"fieldId":"00000000-0000-4000-8000-000000000000","value":${deep}}]}}`,
    );
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
    assert.deepEqual(
      body.errors.slice(0, 2).map((e) => e.path),
      ['body.record.values.0.fieldId', 'body.record.values.1.fieldId'],
    );
  });

  describe('large bodies are checked off the event loop', () => {
    /** The same app, every body checked on the event loop. */
    let onLoop: TestApi;
    /** Bodies over 64 characters checked by a thread, counted. */
    let threaded: TestApi;
    let checker: BodyChecker;
    let checks = 0;

    before(async () => {
      onLoop = await startTestApi({ pool, config: testConfig({ BODY_WORKER_THREADS: '0' }) });
      const threads = createBodyChecker({ threads: 1 })!;
      checker = { ...threads, check: (task) => (checks++, threads.check(task)) };
      threaded = await startTestApi({ pool, config: testConfig({ BODY_WORKER_THRESHOLD_BYTES: '64' }), bodyChecker: checker });
    });
    after(async () => {
      await onLoop?.close();
      await threaded?.close();
      await checker?.close();
    });

    const send = (target: TestApi, body: string) =>
      fetch(`${target.url}/v3/rest/recordings`, {
        method: 'POST',
        headers: { 'X-Service-Api-Key': org.apiKey, 'content-type': 'application/json' },
        body,
      });

    it('a thread gives the answers the event loop gives: malformed, not an object, prototype poisoning, deep, huge, many errors, valid', async () => {
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      const bodies: [string, string][] = [
        ['malformed', `{"record": {"externalId": "x"${' '.repeat(100)}`],
        ['a number', `${' '.repeat(100)}42`],
        ['__proto__', JSON.stringify({ record: { externalId: 'proto', padding: 'p'.repeat(80) } }).replace('"padding"', '"__proto__"')],
        ['deep', `{"record":{"externalId":"deep","values":[{"fieldId":"00000000-0000-4000-8000-000000000000","value":${deep}}]}}`],
        ['huge', JSON.stringify({ record: { externalId: 'many' }, folderIds: new Array(1_000_000).fill(0) })],
        [
          'many errors',
          JSON.stringify({
            record: { externalId: 'some', values: Array.from({ length: 60 }, (_, i) => ({ fieldId: `not-a-uuid-${i}`, value: i })) },
          }),
        ],
      ];
      for (const [name, body] of bodies) {
        const before = checks;
        const [a, b] = await Promise.all([send(onLoop, body), send(threaded, body)]);
        const [textA, textB] = [await a.text(), await b.text()];
        assert.equal(b.status, a.status, name);
        assert.ok(a.status === 400, `${name}: ${a.status}`);
        assert.deepEqual(JSON.parse(textB), JSON.parse(textA), name);
        assert.equal(checks, before + 1, `${name} went to the thread`);
      }
      assert.equal(await recordings(), 0);
      // A valid body: created, with the schema's defaults, through the thread.
      const valid = (externalId: string) => JSON.stringify({ record: { externalId }, name: 'Weekly call', folderIds: [] });
      const [a, b] = await Promise.all([send(onLoop, valid('valid-a')), send(threaded, valid('valid-b'))]);
      assert.deepEqual([a.status, b.status], [201, 201]);
      const [bodyA, bodyB] = [(await a.json()) as Record<string, unknown>, (await b.json()) as Record<string, unknown>];
      assert.deepEqual(Object.keys(bodyB).sort(), Object.keys(bodyA).sort());
      assert.equal(await recordings(), 2);
    });

    it('past the queue, a large body is 503 server_busy with Retry-After; nothing is stored', async () => {
      const small = createBodyChecker({ threads: 1, queuePerThread: 1 })!;
      const busy = await startTestApi({ pool, config: testConfig({ BODY_WORKER_THRESHOLD_BYTES: '64' }), bodyChecker: small });
      try {
        const before = await recordings();
        const body = JSON.stringify({ record: { externalId: 'flood' }, folderIds: new Array(2_000_000).fill(0) });
        const answers = await Promise.all(Array.from({ length: 6 }, () => send(busy, body)));
        const statuses = answers.map((r) => r.status);
        assert.ok(statuses.includes(503), statuses.join(','));
        assert.ok(
          statuses.every((s) => s === 400 || s === 503),
          statuses.join(','),
        );
        const refused = answers.find((r) => r.status === 503)!;
        assert.equal(refused.headers.get('retry-after'), '1');
        assert.deepEqual(await refused.json(), {
          message: 'The service is busy (too many large bodies are being checked); retry later.',
          errorCode: 'server_busy',
        });
        assert.equal(await recordings(), before);
      } finally {
        await busy.close();
        await small.close();
      }
    });
  });
});
