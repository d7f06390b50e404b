import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestKey, createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { DEFAULT_API_KEY_SCOPES } from '../../../src/auth/scopes.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { openSecret } from '../../../src/webhooks/secret-box.js';

const base = '/v3/rest/webhook-endpoints';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const storedRow = z.object({
  secret_sealed: z.string(),
  previous_secret_sealed: z.string().nullable(),
  expires_in_seconds: z.number().nullable(),
  failing_since: z.string().nullable(),
});

/** REST management of webhook endpoints: `webhooks:manage` keys and admin users, per organization. */
describe('webhook endpoints REST', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;
  let org: TestOrg;
  let manage: Record<string, string>;
  const keys = testConfig().temporal.payloadKeys!;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
    org = await createTestOrg(pool);
    manage = { 'X-Service-Api-Key': (await createTestKey(pool, org.organizationId, ['webhooks:manage'])).apiKey };
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  const call = (method: string, path: string, json?: unknown, headers = manage) => api.request(path, { method, headers, json });
  const stored = (id: string) =>
    pool.one(sql.type(storedRow)`
      SELECT secret_sealed, previous_secret_sealed, failing_since,
        extract(epoch FROM previous_secret_expires_at - now())::float8 AS expires_in_seconds
      FROM webhook_endpoints WHERE id = ${id}`);
  const create = async (json: Record<string, unknown> = {}, headers = manage) => {
    const res = await call('POST', base, { url: 'https://hooks.example.com/intake', ...json }, headers);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Record<string, unknown> & { id: string; secret: string };
  };

  it('creates an endpoint whose whsec_ secret is shown once and stored only sealed', async () => {
    const res = await call('POST', base, {
      url: 'https://hooks.example.com/intake?team=7',
      eventTypes: ['signal.created'],
      description: 'CRM',
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers.get('location'), `${base}/${res.body.id}`);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { id, secret, createdAt, updatedAt, ...rest } = res.body as Record<string, string>;
    assert.match(secret!, SECRET);
    assert.equal(Buffer.from(secret!.slice('whsec_'.length), 'base64').length, 32);
    assert.ok(createdAt && createdAt === updatedAt);
    assert.deepEqual(rest, {
      url: 'https://hooks.example.com/intake?team=7',
      description: 'CRM',
      eventTypes: ['signal.created'],
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      previousSecretExpiresAt: null,
    });

    const row = await stored(id!);
    assert.match(row.secret_sealed, /^v1\.signing-secret\.[A-Za-z0-9_-]+$/);
    assert.ok(!row.secret_sealed.includes(secret!.slice('whsec_'.length, 20)), 'no plaintext at rest');
    assert.equal(openSecret(keys, row.secret_sealed), secret);
    assert.equal(row.previous_secret_sealed, null);

    const read = await call('GET', `${base}/${id}`);
    assert.equal(read.status, 200);
    const { secret: _shown, ...withoutSecret } = res.body as Record<string, unknown>;
    assert.deepEqual(read.body, withoutSecret, 'the secret is never read back');
    assert.equal(read.headers.get('location'), null);
  });

  it('eventTypes omitted or null means every type; description defaults to empty; enabled: false creates it disabled by a user', async () => {
    const all = await create();
    assert.deepEqual([all.eventTypes, all.description, all.enabled], [null, '', true]);
    const explicit = await create({ eventTypes: null });
    assert.equal(explicit.eventTypes, null);
    const off = await create({ enabled: false });
    assert.deepEqual([off.enabled, off.disabledReason], [false, 'disabled by a user']);
    assert.ok(typeof off.disabledAt === 'string');
  });

  it('lists the organization’s endpoints oldest first, paged, without secrets', async () => {
    const owner = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': owner.apiKey };
    const first = await create({ description: 'first' }, headers);
    const second = await create({ description: 'second' }, headers);
    const page1 = await call('GET', `${base}?limit=1`, undefined, headers);
    assert.equal(page1.status, 200);
    assert.deepEqual(
      [page1.body.endpoints.map((e: { id: string }) => e.id), page1.body.page, page1.body.limit, page1.body.has_more],
      [[first.id], 1, 1, true],
    );
    const page2 = await call('GET', `${base}?limit=1&page=2`, undefined, headers);
    assert.deepEqual([page2.body.endpoints.map((e: { id: string }) => e.id), page2.body.has_more], [[second.id], false]);
    assert.ok(page2.body.endpoints.every((e: object) => !('secret' in e)));
  });

  it('PATCH changes url, event types and description; disabling records who, enabling clears the reason and the run of failures', async () => {
    const e = await create({ eventTypes: ['signal.created'] });
    const changed = await call('PATCH', `${base}/${e.id}`, {
      url: 'http://receiver.example.com:8080/hooks',
      eventTypes: ['recording.media_failed', 'meeting_join.ended'],
      description: 'ops',
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(
      [changed.body.url, changed.body.eventTypes, changed.body.description, changed.body.enabled],
      ['http://receiver.example.com:8080/hooks', ['recording.media_failed', 'meeting_join.ended'], 'ops', true],
    );
    assert.ok(changed.body.updatedAt > e.updatedAt!);
    assert.equal((await call('PATCH', `${base}/${e.id}`, { eventTypes: null })).body.eventTypes, null);

    const disabled = await call('PATCH', `${base}/${e.id}`, { enabled: false });
    assert.deepEqual([disabled.body.enabled, disabled.body.disabledReason], [false, 'disabled by a user']);
    assert.ok(disabled.body.disabledAt);

    // As the delivery engine leaves an endpoint it disabled after 5 days of failures:
    await pool.query(sql.unsafe`
      UPDATE webhook_endpoints SET disabled_reason = 'failing for 5 days', failing_since = now() - interval '6 days' WHERE id = ${e.id}`);
    const still = await call('PATCH', `${base}/${e.id}`, { enabled: false, description: 'still off' });
    assert.deepEqual(
      [still.body.enabled, still.body.disabledReason],
      [false, 'failing for 5 days'],
      'a disabled endpoint keeps its reason',
    );

    const enabled = await call('PATCH', `${base}/${e.id}`, { enabled: true });
    assert.deepEqual([enabled.body.enabled, enabled.body.disabledReason, enabled.body.disabledAt], [true, null, null]);
    assert.equal((await stored(e.id)).failing_since, null);

    await pool.query(sql.unsafe`UPDATE webhook_endpoints SET failing_since = now() WHERE id = ${e.id}`);
    await call('PATCH', `${base}/${e.id}`, { description: 'same url' });
    assert.notEqual((await stored(e.id)).failing_since, null, 'a change that keeps the URL keeps the run of failures');
    await call('PATCH', `${base}/${e.id}`, { url: 'https://new-receiver.example.com/' });
    assert.equal((await stored(e.id)).failing_since, null, 'a new receiver starts with no failures');

    await call('PATCH', `${base}/${e.id}`, { enabled: false });
    await pool.query(sql.unsafe`UPDATE webhook_endpoints SET failing_since = now() WHERE id = ${e.id}`);
    const both = await call('PATCH', `${base}/${e.id}`, { enabled: true, url: 'https://third-receiver.example.com/' });
    assert.deepEqual([both.status, both.body.enabled, both.body.url], [200, true, 'https://third-receiver.example.com/']);
    assert.equal((await stored(e.id)).failing_since, null);
  });

  it('DELETE answers 204 and removes it; a second DELETE is 404', async () => {
    const e = await create();
    assert.equal((await call('DELETE', `${base}/${e.id}`)).status, 204);
    const gone = await call('GET', `${base}/${e.id}`);
    assert.deepEqual([gone.status, gone.body.errorCode, gone.body.resource], [404, 'not_found', 'Webhook endpoint']);
    assert.equal((await call('DELETE', `${base}/${e.id}`)).status, 404);
    assert.equal((await call('POST', `${base}/${e.id}/rotate-secret`)).status, 404);
    assert.equal((await call('PATCH', `${base}/${e.id}`, { description: 'x' })).status, 404);
  });

  it('rotation answers a new secret; the previous one stays sealed beside it for 24 hours, and a second rotation replaces it', async () => {
    const e = await create();
    const first = await call('POST', `${base}/${e.id}/rotate-secret`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('cache-control'), 'no-store');
    assert.match(first.body.secret, SECRET);
    assert.notEqual(first.body.secret, e.secret);
    let row = await stored(e.id);
    assert.equal(openSecret(keys, row.secret_sealed), first.body.secret);
    assert.equal(openSecret(keys, row.previous_secret_sealed!), e.secret);
    assert.ok(Math.abs(row.expires_in_seconds! - 24 * 3600) < 60, String(row.expires_in_seconds));
    const expiresAt = Date.parse(first.body.previousSecretExpiresAt);
    assert.ok(Math.abs(expiresAt - Date.now() - 24 * 3600 * 1000) < 60_000);
    assert.equal((await call('GET', `${base}/${e.id}`)).body.previousSecretExpiresAt, first.body.previousSecretExpiresAt);

    const second = await call('POST', `${base}/${e.id}/rotate-secret`);
    row = await stored(e.id);
    assert.equal(openSecret(keys, row.secret_sealed), second.body.secret);
    assert.equal(openSecret(keys, row.previous_secret_sealed!), first.body.secret, 'the newest previous secret replaces the older');

    await pool.query(sql.unsafe`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${e.id}`);
    assert.equal((await call('GET', `${base}/${e.id}`)).body.previousSecretExpiresAt, null, 'an expired previous secret is not shown');
  });

  it("another organization's endpoint is 404 on every route and absent from its list", async () => {
    const e = await create();
    const other = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': other.apiKey };
    for (const [method, path, body] of [
      ['GET', `${base}/${e.id}`],
      ['PATCH', `${base}/${e.id}`, { enabled: false }],
      ['DELETE', `${base}/${e.id}`],
      ['POST', `${base}/${e.id}/rotate-secret`],
    ] as const) {
      const res = await call(method, path, body, headers);
      assert.deepEqual([res.status, res.body.errorCode], [404, 'not_found'], `${method} ${path}`);
    }
    assert.deepEqual((await call('GET', base, undefined, headers)).body.endpoints, []);
    assert.equal((await call('GET', `${base}/${e.id}`)).body.enabled, true, 'unchanged');
    const notAnId = await call('GET', `${base}/not-a-uuid`);
    assert.deepEqual([notAnId.status, notAnId.body.errorCode], [404, 'not_found']);
  });

  it('needs webhooks:manage: a key without it and a member are 403, an admin user may, no credential is 401', async () => {
    const plain = (await createTestKey(pool, org.organizationId, [...DEFAULT_API_KEY_SCOPES, 'admin'])).apiKey;
    const member = await createTestUser(pool, org.organizationId, 'member');
    const admin = await createTestUser(pool, org.organizationId, 'admin');
    const e = await create();
    for (const headers of [{ 'X-Service-Api-Key': plain }, { Authorization: `Bearer ${member.accessToken}` }] as Record<string, string>[]) {
      for (const [method, path, body] of [
        ['POST', base, { url: 'https://hooks.example.com/' }],
        ['GET', base],
        ['GET', `${base}/${e.id}`],
        ['PATCH', `${base}/${e.id}`, { enabled: false }],
        ['DELETE', `${base}/${e.id}`],
        ['POST', `${base}/${e.id}/rotate-secret`],
      ] as const) {
        const res = await call(method, path, body, headers);
        assert.deepEqual(
          [res.status, res.body],
          [
            403,
            {
              message: "The credential lacks the 'webhooks:manage' scope.",
              errorCode: 'insufficient_scope',
              requiredScope: 'webhooks:manage',
            },
          ],
          `${method} ${path}`,
        );
      }
    }
    const byAdmin = await create({ description: 'by an admin' }, { Authorization: `Bearer ${admin.accessToken}` });
    assert.equal(byAdmin.description, 'by an admin');
    assert.equal((await call('GET', base, undefined, {})).status, 401);
  });

  it('refuses every invalid body with 400 validation_failed naming the field', async () => {
    const e = await create();
    const cases: [string, string, unknown, { path: string; message: string }[]][] = [
      ['POST', base, {}, [{ path: 'body.url', message: "must have required property 'url'" }]],
      ['POST', base, { url: '' }, [{ path: 'body.url', message: 'must NOT have fewer than 1 characters' }]],
      [
        'POST',
        base,
        { url: `https://hooks.example.com/${'a'.repeat(2030)}` },
        [{ path: 'body.url', message: 'must NOT have more than 2048 characters' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/a b' },
        [{ path: 'body.url', message: 'must not contain whitespace (percent-encode it)' }],
      ],
      ['POST', base, { url: 'hooks.example.com/intake' }, [{ path: 'body.url', message: 'must be an absolute URL (https://host/path)' }]],
      ['POST', base, { url: 'https:hooks.example.com' }, [{ path: 'body.url', message: 'must be an absolute URL (https://host/path)' }]],
      ['POST', base, { url: 'ftp://hooks.example.com/' }, [{ path: 'body.url', message: 'must be an http or https URL' }]],
      [
        'POST',
        base,
        { url: 'https://user:pass@hooks.example.com/' },
        [{ path: 'body.url', message: 'must not contain credentials (user:password@); authenticate deliveries by their signature' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/#top' },
        [{ path: 'body.url', message: 'must not have a fragment (#…): it is never sent to the server' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', eventTypes: [] },
        [{ path: 'body.eventTypes', message: 'must NOT have fewer than 1 items' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', eventTypes: ['signal.created', 'signal.created'] },
        [{ path: 'body.eventTypes', message: 'must NOT have duplicate items (items ## 1 and 0 are identical)' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', eventTypes: ['signal.deleted'] },
        [
          {
            path: 'body.eventTypes.0',
            message:
              'must be one of: signal.created, agent_session.processed, agent_session.billing_blocked, agent_session.billing_resumed, recording.media_ready, recording.media_failed, recording.transcript_completed, meeting_join.ended',
          },
        ],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', eventTypes: 'signal.created' },
        [{ path: 'body.eventTypes', message: 'must be array,null' }],
      ],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', description: 'd'.repeat(501) },
        [{ path: 'body.description', message: 'must NOT have more than 500 characters' }],
      ],
      ['POST', base, { url: 'https://hooks.example.com/', enabled: 'yes' }, [{ path: 'body.enabled', message: 'must be boolean' }]],
      [
        'POST',
        base,
        { url: 'https://hooks.example.com/', secret: 'whsec_mine' },
        [{ path: 'body.secret', message: "unknown property 'secret'" }],
      ],
      ['PATCH', `${base}/${e.id}`, {}, [{ path: 'body', message: 'must NOT have fewer than 1 properties' }]],
      ['PATCH', `${base}/${e.id}`, { url: 'mailto:ops@example.com' }, [{ path: 'body.url', message: 'must be an http or https URL' }]],
      ['PATCH', `${base}/${e.id}`, { enabled: null }, [{ path: 'body.enabled', message: 'must be boolean' }]],
      ['GET', `${base}?limit=0`, undefined, [{ path: 'query.limit', message: 'must be >= 1' }]],
    ];
    for (const [method, path, body, errors] of cases) {
      const res = await call(method, path, body);
      assert.deepEqual(
        [res.status, res.body],
        [400, { message: 'The request is invalid.', errorCode: 'validation_failed', errors }],
        `${method} ${JSON.stringify(body)}`,
      );
    }
    assert.equal((await call('GET', `${base}/${e.id}`)).body.url, 'https://hooks.example.com/intake', 'no refused PATCH changed it');
  });

  it('allows 20 endpoints per organization, also under concurrent creates: the next is 409 webhook_endpoint_limit_reached', async () => {
    const owner = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': owner.apiKey };
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => call('POST', base, { url: `https://hooks.example.com/${i}` }, headers)),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [...Array(20).fill(201), ...Array(5).fill(409)]);
    const refused = results.find((r) => r.status === 409)!;
    assert.deepEqual(refused.body, {
      message: 'The organization has 20 webhook endpoints, as many as it may; delete one first.',
      errorCode: 'webhook_endpoint_limit_reached',
      limit: 20,
    });
    const [one] = (await call('GET', `${base}?limit=1`, undefined, headers)).body.endpoints;
    assert.equal((await call('DELETE', `${base}/${one.id}`, undefined, headers)).status, 204);
    assert.equal(
      (await call('POST', base, { url: 'https://hooks.example.com/again' }, headers)).status,
      201,
      'a deleted one frees its place',
    );
  });

  it('documents the routes in /openapi.json: closed schemas, the secret only in create and rotate, their errors', async () => {
    const doc = (await api.request('/openapi.json')).body;
    const ops = doc.paths[base];
    const one = doc.paths[`${base}/{endpointId}`];
    const rotate = doc.paths[`${base}/{endpointId}/rotate-secret`];
    assert.deepEqual(
      [
        ops.post.operationId,
        ops.get.operationId,
        one.get.operationId,
        one.patch.operationId,
        one.delete.operationId,
        rotate.post.operationId,
      ],
      [
        'createWebhookEndpoint',
        'listWebhookEndpoints',
        'getWebhookEndpoint',
        'updateWebhookEndpoint',
        'deleteWebhookEndpoint',
        'rotateWebhookEndpointSecret',
      ],
    );
    const schemaOf = (op: { responses: Record<string, { content: { 'application/json': { schema: unknown } } }> }, status: string) =>
      op.responses[status]!.content['application/json'].schema;
    assert.deepEqual(schemaOf(ops.post, '201'), { $ref: '#/components/schemas/WebhookEndpointWithSecret' });
    assert.deepEqual(schemaOf(rotate.post, '200'), { $ref: '#/components/schemas/WebhookEndpointWithSecret' });
    assert.deepEqual(schemaOf(one.get, '200'), { $ref: '#/components/schemas/WebhookEndpoint' });
    const endpoint = doc.components.schemas.WebhookEndpoint;
    assert.equal(endpoint.additionalProperties, false);
    assert.equal('secret' in endpoint.properties, false);
    assert.equal(doc.components.schemas.WebhookEndpointWithSecret.additionalProperties, false);
    assert.match(ops.post.responses['409'].description, /webhook_endpoint_limit_reached/);
    for (const op of [ops.post, ops.get, one.get, one.patch, one.delete, rotate.post]) {
      assert.match(op.responses['403'].description, /insufficient_scope/, op.operationId);
      assert.deepEqual(op.security, [{ apiKey: [] }, { bearer: [] }], op.operationId);
    }
    assert.deepEqual(ops.post.requestBody.content['application/json'].schema.properties.eventTypes.items.enum, [
      'signal.created',
      'agent_session.processed',
      'agent_session.billing_blocked',
      'agent_session.billing_resumed',
      'recording.media_ready',
      'recording.media_failed',
      'recording.transcript_completed',
      'meeting_join.ended',
    ]);
  });

  it('with NODE_ENV=production, only https receivers', async () => {
    const production = await startTestApi({
      pool,
      config: testConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://intake.example.com' }),
    });
    try {
      const post = (url: string) => production.request(base, { method: 'POST', headers: manage, json: { url } });
      const http = await post('http://hooks.example.com/');
      assert.deepEqual(
        [http.status, http.body.errors],
        [400, [{ path: 'body.url', message: 'must be an https URL (this deployment delivers only over TLS)' }]],
      );
      const e = (await post('https://hooks.example.com/')).body;
      assert.equal(e.url, 'https://hooks.example.com/');
      const patch = await production.request(`${base}/${e.id}`, {
        method: 'PATCH',
        headers: manage,
        json: { url: 'http://hooks.example.com/' },
      });
      assert.equal(patch.status, 400);
    } finally {
      await production.close();
    }
  });
});
