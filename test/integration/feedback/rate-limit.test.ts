import { strict as assert } from 'node:assert';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey } from '../../../harness/fixtures.js';
import { feedbackContext, type FeedbackContext } from '../../helpers/feedback.js';

/** 100 requests a minute per API key across the feedback area, counted in PostgreSQL. */
describe('feedback rate limit', () => {
  let f: FeedbackContext;
  let replica: TestApi;

  before(async () => {
    f = await feedbackContext({});
    // A second API process on the same database: the count is shared.
    replica = await startTestApi({ pool: f.pool, databaseUrl: f.databaseUrl, config: testConfig() });
  });
  after(async () => {
    await replica?.close();
    await f?.close();
  });

  it('sends RateLimit headers on every response, errors included, and 429 with Retry-After past 100 a minute across replicas', async () => {
    const key = (await createTestKey(f.pool, f.org.organizationId, ['feedback:write', 'feedback:read'])).apiKey;
    const headers = { 'X-Service-Api-Key': key };
    const remaining: number[] = [];
    for (let i = 0; i < 100; i++) {
      const api = i % 2 === 0 ? f.api : replica;
      // valid reads, a 404 and a 400 all count
      const path =
        i === 10 ? '/v3/rest/feedback-sources/424242' : i === 11 ? '/v3/rest/feedback-sources?limit=0' : '/v3/rest/feedback-sources';
      const res = await api.request(path, { headers });
      assert.equal(res.status, i === 10 ? 404 : i === 11 ? 400 : 200);
      assert.equal(res.headers.get('ratelimit-limit'), '100');
      const reset = Number(res.headers.get('ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    assert.deepEqual(
      remaining,
      Array.from({ length: 100 }, (_, i) => 99 - i),
    );

    const limited = await replica.request('/v3/rest/feedback-sources', { method: 'POST', headers, json: { name: 'x', type: 'api' } });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.errorCode, 'rate_limited');
    assert.match(limited.body.message, /Rate limit of 100 requests a minute exceeded/);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    assert.equal(limited.body.retryAfterSeconds, retryAfter);
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    assert.equal((await f.api.request('/v3/rest/feedback-sources', { headers })).status, 429);
    assert.equal(
      (await f.as(f.org.apiKey)('/v3/rest/feedback-sources?limit=1')).body.feedback_sources.length,
      0,
      'the limited POST wrote nothing',
    );
  });

  it('counts each key on its own', async () => {
    const res = await f.as(f.other.apiKey)('/v3/rest/feedback-sources');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit-remaining'), '99');
  });
});
