import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_OPERATOR_TOKEN, testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

describe('HTTP error handling', () => {
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  // A route with a JSON body: the operator's credit top-up.
  let credits: string;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool, config: testConfig({ BODY_LIMIT_BYTES: '1024' }) });
    org = await createTestOrg(pool);
    credits = `/v3/operator/organizations/${org.organizationId}/credits`;
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const auth = () => ({ 'X-Operator-Token': TEST_OPERATOR_TOKEN });

  it('answers an unknown route with 404 JSON', async () => {
    const res = await api.request('/v3/rest/nothing-here');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { message: 'No route for GET /v3/rest/nothing-here.', errorCode: 'route_not_found' });
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const res = await api.request('/v3/rest/organization', { method: 'DELETE', headers: auth() });
    assert.equal(res.status, 405);
    assert.deepEqual(res.body, { message: 'DELETE is not allowed on this resource.', errorCode: 'method_not_allowed' });
    assert.match(res.headers.get('allow') ?? '', /GET/);
    // fetch refuses TRACE; node:http sends it (the router does not know it and would say 501)
    const trace = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = http.request(`${api.url}/v3/rest/organization`, { method: 'TRACE', headers: auth() }, (response) => {
        let body = '';
        response.on('data', (c: Buffer) => (body += c.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      r.on('error', reject);
      r.end();
    });
    assert.equal(trace.status, 405);
    assert.equal(JSON.parse(trace.body).errorCode, 'method_not_allowed');
  });

  it('answers a body over the limit with 413', async () => {
    const res = await api.request(credits, { method: 'POST', headers: auth(), json: { amount: 1, reason: 'x'.repeat(2000) } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { message: 'The request body exceeds 1024 bytes.', errorCode: 'payload_too_large' });
  });

  it('answers a body over the limit sent without Content-Length (chunked) with 413', async () => {
    const big = JSON.stringify({ amount: 1, reason: 'y'.repeat(4000) });
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${api.url}${credits}`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { errorCode: string }).errorCode, 'payload_too_large');
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await api.request(credits, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'amount=1' });
    assert.equal(res.status, 415);
    assert.deepEqual(res.body, {
      message: 'Send the body as JSON with Content-Type: application/json.',
      errorCode: 'unsupported_media_type',
    });
  });

  it('answers malformed JSON with 400 malformed_json', async () => {
    const res = await api.request(credits, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"amount": ',
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { message: 'The request body is not valid JSON.', errorCode: 'malformed_json' });
  });

  it('answers schema violations with 400 and every error by path, and stores nothing', async () => {
    const res = await api.request(credits, { method: 'POST', headers: auth(), json: { amount: 0, bonus: true } });
    assert.equal(res.status, 400);
    assert.equal(res.body.errorCode, 'validation_failed');
    assert.deepEqual(
      [...res.body.errors].sort((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path)),
      [
        { path: 'body.amount', message: 'must be >= 1' },
        { path: 'body.bonus', message: "unknown property 'bonus'" },
      ],
    );
    const missing = await api.request(credits, { method: 'POST', headers: auth(), json: {} });
    assert.deepEqual(missing.body.errors, [{ path: 'body.amount', message: "must have required property 'amount'" }]);
    const orgNow = await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } });
    assert.equal(orgNow.body.creditBalance, 0);
  });

  it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
    const given = await api.request('/healthz', { headers: { 'X-Request-Id': 'trace-abc-12345' } });
    assert.equal(given.headers.get('x-request-id'), 'trace-abc-12345');
    const made = await api.request('/healthz', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('hides internals on a 500', async () => {
    const broken = {
      ...pool,
      maybeOne: async () => {
        throw new Error('secret internal detail: relation "x" at 10.0.0.5');
      },
    } as unknown as DatabasePool;
    const brokenApi = await startTestApi({ pool: broken, temporal: api.temporal });
    try {
      const res = await brokenApi.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } });
      assert.equal(res.status, 500);
      assert.deepEqual(Object.keys(res.body).sort(), ['errorCode', 'message', 'requestId']);
      assert.equal(res.body.errorCode, 'internal_error');
      assert.equal(res.body.message, 'Internal server error.');
      assert.ok(!JSON.stringify(res.body).includes('secret internal detail'));
    } finally {
      await brokenApi.close();
    }
  });

  it('credits an organization through the operator route, the HTTP equivalent of `intake credits add`', async () => {
    const res = await api.request(credits, { method: 'POST', headers: auth(), json: { amount: 25 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { organizationId: org.organizationId, balance: 25, resumedSessions: 0 });
    const unknown = await api.request(`/v3/operator/organizations/${randomUUID()}/credits`, {
      method: 'POST',
      headers: auth(),
      json: { amount: 1 },
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { message: 'Organization not found.', errorCode: 'not_found', resource: 'Organization' });
  });

  it('refuses credit top-ups from organizations: only the operator credential adds credits', async () => {
    const admin = await createTestKey(pool, org.organizationId, ['admin']);
    const before = (await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } })).body.creditBalance;
    // The organization-facing route is gone, whatever the credential's scopes.
    const old = await api.request('/v3/rest/organization/credits', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': admin.apiKey },
      json: { amount: 1000 },
    });
    assert.equal(old.status, 404);
    // An organization's key is not the operator's credential.
    const asOrg = await api.request(credits, { method: 'POST', headers: { 'X-Service-Api-Key': admin.apiKey }, json: { amount: 1000 } });
    assert.equal(asOrg.status, 401);
    assert.deepEqual(asOrg.body, {
      message: 'Authentication required: send the operator token in X-Operator-Token.',
      errorCode: 'unauthenticated',
    });
    const wrong = await api.request(credits, {
      method: 'POST',
      headers: { 'X-Operator-Token': `${TEST_OPERATOR_TOKEN}x` },
      json: { amount: 1000 },
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { message: 'The operator token is not valid.', errorCode: 'invalid_credentials' });
    // No OPERATOR_TOKEN configured: nobody is the operator.
    const unconfigured = await startTestApi({ pool, config: testConfig({ OPERATOR_TOKEN: '' }) });
    try {
      const res = await unconfigured.request(credits, { method: 'POST', headers: auth(), json: { amount: 1000 } });
      assert.equal(res.status, 401);
      assert.equal(res.body.errorCode, 'invalid_credentials');
    } finally {
      await unconfigured.close();
    }
    const after = (await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': org.apiKey } })).body.creditBalance;
    assert.equal(after, before, 'no refused top-up added anything');
  });

  it('serves an OpenAPI 3.1 document built from the validation schemas', async () => {
    const res = await api.request('/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const op = res.body.paths['/v3/operator/organizations/{organizationId}/credits'].post;
    assert.equal(op.requestBody.content['application/json'].schema.properties.amount.minimum, 1);
    assert.deepEqual(op.security, [{ operatorToken: [] }]);
    assert.ok(op.responses['401'] && op.responses['404'] && op.responses['413'] && op.responses['415']);
    assert.equal(res.body.paths['/v3/rest/organization/credits'], undefined);
    assert.deepEqual(res.body.paths['/v3/rest/users/{userId}'].get.security, [{ apiKey: [] }, { bearer: [] }]);
    assert.ok(res.body.paths['/readyz'].get);
    assert.ok(res.body.paths['/v3/rest/users/{userId}'].get.parameters.some((p: { name: string }) => p.name === 'userId'));
    const feedback = res.body.paths['/v3/rest/feedback-sources/{id}/records'];
    assert.deepEqual(feedback.post.security, [{ apiKey: [] }]);
    assert.deepEqual(feedback.post.requestBody.content['application/json'].schema.properties.fields.items.properties.type.enum, [
      'boolean',
      'date',
      'datetime',
      'float',
      'integer',
      'json',
      'string',
    ]);
    assert.ok(feedback.post.responses['409'] && feedback.post.responses['429']);
    assert.ok(feedback.get.parameters.some((p: { name: string }) => p.name === 'external_id'));
    for (const path of [
      '/v3/rest/feedback-sources',
      '/v3/rest/feedback-sources/{id}',
      '/v3/rest/people',
      '/v3/rest/feedback-sources/{id}/records/{recordId}',
    ]) {
      assert.ok(res.body.paths[path], `OpenAPI covers ${path}`);
    }
    assert.ok(res.body.paths['/v3/rest/people'].put.responses['201'] && res.body.paths['/v3/rest/people'].get);
    const ingest = res.body.paths['/v3/rest/agent-conversations/ingest'].post;
    assert.deepEqual(ingest.security, [{ agentKey: [] }]);
    assert.equal(res.body.components.securitySchemes.agentKey.name, 'X-Service-Agent-Key');
    assert.equal(ingest.requestBody.content['application/json'].schema.properties.events.maxItems, 500);
    for (const status of ['202', '400', '401', '403', '404', '409', '503'])
      assert.ok(ingest.responses[status], `ingest documents ${status}`);
    for (const path of [
      '/v3/rest/agent-applications',
      '/v3/rest/agent-applications/{applicationId}/credentials/{credentialId}',
      '/v3/rest/agent-conversations/sessions/{sessionId}',
    ]) {
      assert.ok(res.body.paths[path], `OpenAPI covers ${path}`);
    }
  });
});
