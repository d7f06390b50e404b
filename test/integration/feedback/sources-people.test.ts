import { strict as assert } from 'node:assert';
import { createTestKey, createTestUser } from '../../../harness/fixtures.js';
import { feedbackContext, type FeedbackContext } from '../../helpers/feedback.js';

describe('feedback sources and people', () => {
  let f: FeedbackContext;
  let req: ReturnType<FeedbackContext['as']>;

  before(async () => {
    f = await feedbackContext();
    req = f.as(f.org.apiKey);
  });
  after(async () => f?.close());

  describe('POST /v3/rest/feedback-sources', () => {
    it('creates a source: 201, Location, the spec fields', async () => {
      const res = await req('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'Zendesk', type: 'api' } });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'id', 'name', 'type']);
      assert.equal(res.body.name, 'Zendesk');
      assert.equal(res.body.type, 'api');
      assert.ok(Number.isInteger(res.body.id));
      assert.equal(res.headers.get('location'), `/v3/rest/feedback-sources/${res.body.id}`);
    });

    it('answers 400 for another type, a missing name and unknown properties', async () => {
      const res = await req('/v3/rest/feedback-sources', { method: 'POST', json: { type: 'email', color: 'red' } });
      assert.equal(res.status, 400);
      assert.equal(res.body.errorCode, 'validation_failed');
      assert.deepEqual(
        [...res.body.errors].sort((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path)),
        [
          { path: 'body.color', message: "unknown property 'color'" },
          { path: 'body.name', message: "must have required property 'name'" },
          { path: 'body.type', message: 'must be one of: api' },
        ],
      );
      const list = await req('/v3/rest/feedback-sources');
      assert.equal(list.body.feedback_sources.length, 1, 'nothing stored');
    });

    it('lists with pages, gets one, and hides other organizations (404)', async () => {
      for (const name of ['B', 'C']) await req('/v3/rest/feedback-sources', { method: 'POST', json: { name, type: 'api' } });
      const first = await req('/v3/rest/feedback-sources?limit=2');
      assert.equal(first.status, 200);
      assert.deepEqual([first.body.page, first.body.limit, first.body.has_more, first.body.feedback_sources.length], [1, 2, true, 2]);
      const second = await req('/v3/rest/feedback-sources?limit=2&page=2');
      assert.deepEqual([second.body.has_more, second.body.feedback_sources.length], [false, 1]);
      const id = first.body.feedback_sources[0].id;
      assert.equal((await req(`/v3/rest/feedback-sources/${id}`)).body.id, id);
      const cross = await f.as(f.other.apiKey)(`/v3/rest/feedback-sources/${id}`);
      assert.equal(cross.status, 404);
      assert.deepEqual(cross.body, { message: 'Feedback source not found.', errorCode: 'not_found', resource: 'Feedback source' });
      assert.equal((await req('/v3/rest/feedback-sources/abc')).status, 404);
      assert.equal((await f.as(f.other.apiKey)('/v3/rest/feedback-sources')).body.feedback_sources.length, 0);
      const badQuery = await req('/v3/rest/feedback-sources?limit=500');
      assert.equal(badQuery.status, 400);
      assert.deepEqual(badQuery.body.errors, [{ path: 'query.limit', message: 'must be <= 100' }]);
    });
  });

  describe('credentials', () => {
    it('refuses a user token (401: the feedback area takes only the organization key)', async () => {
      const user = await createTestUser(f.pool, f.org.organizationId, 'admin');
      const res = await f.api.request('/v3/rest/feedback-sources', { headers: { Authorization: `Bearer ${user.accessToken}` } });
      assert.equal(res.status, 401);
      assert.equal(res.body.errorCode, 'unauthenticated');
    });

    it('answers 401 without or with a bad key, 403 for a write without feedback:write and for a read without feedback:read', async () => {
      assert.equal((await f.api.request('/v3/rest/feedback-sources')).status, 401);
      const bad = await f.as('ik_nope')('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'x', type: 'api' } });
      assert.deepEqual([bad.status, bad.body.errorCode], [401, 'invalid_credentials']);
      const readOnly = await createTestKey(f.pool, f.org.organizationId, ['recordings:read']);
      const write = await f.as(readOnly.apiKey)('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'x', type: 'api' } });
      assert.equal(write.status, 403);
      assert.deepEqual(write.body, {
        message: "The credential lacks the 'feedback:write' scope.",
        errorCode: 'insufficient_scope',
        requiredScope: 'feedback:write',
      });
      const people = await f.as(readOnly.apiKey)('/v3/rest/people', { method: 'PUT', json: { email: 'a@b.co' } });
      assert.equal(people.status, 403);
      // A key for recordings reads no feedback: not the sources, not people's e-mails, not records.
      const source = await f.as(f.org.apiKey)('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'scoped', type: 'api' } });
      for (const path of [
        '/v3/rest/feedback-sources',
        `/v3/rest/feedback-sources/${source.body.id}`,
        '/v3/rest/people?email=a@b.co',
        `/v3/rest/feedback-sources/${source.body.id}/records`,
      ]) {
        const read = await f.as(readOnly.apiKey)(path);
        assert.equal(read.status, 403, path);
        assert.deepEqual(read.body, {
          message: "The credential lacks the 'feedback:read' scope.",
          errorCode: 'insufficient_scope',
          requiredScope: 'feedback:read',
        });
      }
      const reader = await createTestKey(f.pool, f.org.organizationId, ['feedback:read']);
      assert.equal((await f.as(reader.apiKey)('/v3/rest/feedback-sources')).status, 200);
      assert.equal((await f.as(reader.apiKey)('/v3/rest/people?email=a@b.co')).status, 200);
      assert.equal(
        (await f.as(reader.apiKey)('/v3/rest/feedback-sources', { method: 'POST', json: { name: 'x', type: 'api' } })).status,
        403,
      );
    });
  });

  describe('PUT /v3/rest/people', () => {
    it('creates (201) then updates (200) by case-insensitive e-mail, keeping fields not sent', async () => {
      const created = await req('/v3/rest/people', {
        method: 'PUT',
        json: {
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'Ada@Example.com',
          boundary: 'external',
          company: { name: 'Analytical', domain: 'example.com' },
        },
      });
      assert.equal(created.status, 201);
      assert.match(created.body.uuid, /^[0-9a-f-]{36}$/);
      assert.ok(Number.isInteger(created.body.id) && Number.isInteger(created.body.company_id));
      assert.deepEqual([created.body.first_name, created.body.email, created.body.boundary], ['Ada', 'Ada@Example.com', 'external']);

      const updated = await req('/v3/rest/people', { method: 'PUT', json: { email: 'ada@EXAMPLE.com', last_name: 'King' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.id, created.body.id);
      assert.equal(updated.body.uuid, created.body.uuid);
      assert.deepEqual(
        [updated.body.first_name, updated.body.last_name, updated.body.company_id],
        ['Ada', 'King', created.body.company_id],
      );
    });

    it('upserts the company by domain within the organization and links it', async () => {
      const a = await req('/v3/rest/people', { method: 'PUT', json: { email: 'b@acme.io', company: { name: 'Acme', domain: 'acme.io' } } });
      const b = await req('/v3/rest/people', {
        method: 'PUT',
        json: { email: 'c@acme.io', company: { name: 'Acme Inc', domain: 'ACME.io' } },
      });
      assert.equal(a.body.company_id, b.body.company_id);
      const elsewhere = await f.as(f.other.apiKey)('/v3/rest/people', {
        method: 'PUT',
        json: { email: 'b@acme.io', company: { name: 'Acme', domain: 'acme.io' } },
      });
      assert.equal(elsewhere.status, 201, 'the same e-mail in another organization is another person');
      assert.notEqual(elsewhere.body.company_id, a.body.company_id);
      assert.notEqual(elsewhere.body.id, a.body.id);
    });

    it('answers 400 for a bad e-mail, boundary, company or missing e-mail, and stores nothing', async () => {
      const res = await req('/v3/rest/people', {
        method: 'PUT',
        json: { email: 'not-an-email', boundary: 'internal', company: { name: 'X' } },
      });
      assert.equal(res.status, 400);
      assert.deepEqual(
        new Set(res.body.errors.map((e: { path: string }) => e.path)),
        new Set(['body.email', 'body.boundary', 'body.company.domain']),
      );
      const missing = await req('/v3/rest/people', { method: 'PUT', json: { first_name: 'No mail' } });
      assert.deepEqual(missing.body.errors, [{ path: 'body.email', message: "must have required property 'email'" }]);
      assert.equal((await req('/v3/rest/people?email=not-an-email')).body.people.length, 0);
    });

    it('settles concurrent upserts of one new e-mail into one person: one 201, the rest 200', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          req('/v3/rest/people', {
            method: 'PUT',
            json: { email: `Race@Example.org`, first_name: `R${i}`, company: { name: 'Race', domain: 'example.org' } },
          }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
      assert.equal(new Set(results.map((r) => r.body.company_id)).size, 1);
    });

    it('finds people by e-mail, case-insensitively, only in the caller organization', async () => {
      const found = await req('/v3/rest/people?email=ADA@example.COM');
      assert.equal(found.status, 200);
      assert.equal(found.body.people.length, 1);
      assert.equal(found.body.people[0].last_name, 'King');
      assert.equal((await f.as(f.other.apiKey)('/v3/rest/people?email=ada@example.com')).body.people.length, 0);
    });
  });
});
