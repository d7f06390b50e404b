import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { openSecret } from '../../../src/webhooks/secret-box.js';
import { runIntake } from '../../helpers/cli.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** `intake webhook create|list|show|update|delete|rotate-secret`, as operators run them, against the same rows as the REST API. */
describe('intake admin CLI: webhook endpoints', function () {
  this.timeout(240_000);
  let pool: DatabasePool;
  let api: TestApi;
  let env: Record<string, string>;
  const intake = (...args: string[]) => runIntake(env, ...args);
  const keys = testConfig().temporal.payloadKeys!;
  const sealed = (id: string) =>
    pool.one(sql.type(z.object({ secret_sealed: z.string(), previous_secret_sealed: z.string().nullable() }))`
      SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = ${id}`);

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    env = { DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  it('creates, lists, shows, updates, rotates and deletes an endpoint; the secret is printed only by create and rotate-secret', async () => {
    const org = (await intake('org', 'create', '--name', 'Hooks Inc')).json.organizationId as string;
    const created = await intake(
      'webhook',
      'create',
      '--org',
      org,
      '--url',
      'https://hooks.example.com/intake',
      '--event-types',
      'signal.created,recording.media_failed',
      '--description',
      'CRM sync',
    );
    assert.equal(created.code, 0, created.stderr);
    const { id, secret, createdAt, updatedAt, ...rest } = created.json;
    assert.match(secret, SECRET);
    assert.ok(createdAt && updatedAt);
    assert.deepEqual(rest, {
      url: 'https://hooks.example.com/intake',
      description: 'CRM sync',
      eventTypes: ['signal.created', 'recording.media_failed'],
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      previousSecretExpiresAt: null,
    });
    // Sealed under the deployment's payload keys: what the API and the delivery worker open.
    assert.equal(openSecret(keys, (await sealed(id)).secret_sealed), secret);

    // The REST API sees the same endpoint.
    const key = await intake('api-key', 'create', '--org', org, '--scopes', 'webhooks:manage');
    const rest1 = await api.request(`/v3/rest/webhook-endpoints/${id}`, { headers: { 'X-Service-Api-Key': key.json.apiKey } });
    assert.equal(rest1.status, 200);
    const { secret: _printed, ...shown } = created.json;
    assert.deepEqual(rest1.body, shown);

    const listed = await intake('webhook', 'list', '--org', org);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(listed.json, { endpoints: [shown] });
    const show = await intake('webhook', 'show', '--org', org, '--id', id);
    assert.deepEqual(show.json, shown);

    const updated = await intake(
      'webhook',
      'update',
      '--org',
      org,
      '--id',
      id,
      '--event-types',
      'all',
      '--enabled',
      'off',
      '--description',
      '',
    );
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(
      [updated.json.eventTypes, updated.json.enabled, updated.json.disabledReason, updated.json.description],
      [null, false, 'disabled by a user', ''],
    );
    const moved = await intake('webhook', 'update', '--org', org, '--id', id, '--url', 'http://10.0.0.7:9000/hooks', '--enabled', 'on');
    assert.deepEqual(
      [moved.json.url, moved.json.enabled, moved.json.disabledReason, moved.json.disabledAt],
      ['http://10.0.0.7:9000/hooks', true, null, null],
    );
    assert.equal('secret' in moved.json, false);

    const rotated = await intake('webhook', 'rotate-secret', '--org', org, '--id', id);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.json.secret, SECRET);
    assert.notEqual(rotated.json.secret, secret);
    assert.ok(Date.parse(rotated.json.previousSecretExpiresAt) > Date.now() + 23 * 3600 * 1000);
    const row = await sealed(id);
    assert.equal(openSecret(keys, row.secret_sealed), rotated.json.secret);
    assert.equal(openSecret(keys, row.previous_secret_sealed!), secret);

    const deleted = await intake('webhook', 'delete', '--org', org, '--id', id);
    assert.deepEqual([deleted.code, deleted.json], [0, { id, deleted: true }]);
    const again = await intake('webhook', 'delete', '--org', org, '--id', id);
    assert.deepEqual([again.code, again.stderr], [1, 'intake: Webhook endpoint not found.\n']);
    assert.deepEqual((await intake('webhook', 'list', '--org', org)).json, { endpoints: [] });
  });

  it('reports bad input on stderr with a non-zero exit', async () => {
    const org = (await intake('org', 'create', '--name', 'Hooks bad input')).json.organizationId as string;
    const other = (await intake('org', 'create', '--name', 'Other')).json.organizationId as string;
    const id = (await intake('webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/')).json.id as string;
    const cases: [string[], RegExp, number][] = [
      [['webhook', 'create', '--org', org], /--url is required/, 2],
      [['webhook', 'create', '--org', UNKNOWN, '--url', 'https://hooks.example.com/'], /organization .* not found/, 1],
      [['webhook', 'create', '--org', org, '--url', 'ftp://hooks.example.com/'], /url must be an http or https URL/, 1],
      [['webhook', 'create', '--org', org, '--url', 'https://u:p@hooks.example.com/'], /url must not contain credentials/, 1],
      [
        ['webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/', '--event-types', 'signal.deleted'],
        /--event-types must be "all" or distinct types of: signal.created/,
        2,
      ],
      [['webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/', '--enabled', 'yes'], /--enabled must be on or off/, 2],
      [
        ['webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/', '--description', 'd'.repeat(501)],
        /--description must be at most 500 characters/,
        2,
      ],
      [['webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/', '--secret', 'x'], /Unknown option '--secret'/, 2],
      [['webhook', 'update', '--org', org, '--id', id], /nothing to update/, 2],
      [['webhook', 'update', '--org', other, '--id', id, '--enabled', 'off'], /Webhook endpoint not found/, 1],
      [['webhook', 'show', '--org', other, '--id', id], /Webhook endpoint not found/, 1],
      [['webhook', 'rotate-secret', '--org', other, '--id', id], /Webhook endpoint not found/, 1],
      [['webhook', 'delete', '--org', other, '--id', id], /Webhook endpoint not found/, 1],
      [['webhook', 'show', '--org', org], /--id is required/, 2],
    ];
    // Four processes at a time: each CLI run starts tsx, which takes seconds on a busy machine.
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4);
      const results = await Promise.all(batch.map(([args]) => intake(...args)));
      for (const [j, [args, message, code]] of batch.entries()) {
        const result = results[j]!;
        assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
        assert.equal(result.stdout, '', args.join(' '));
        assert.match(result.stderr, message, args.join(' '));
      }
    }
    assert.equal((await intake('webhook', 'show', '--org', org, '--id', id)).json.enabled, true, 'no refused command changed it');
  });

  it('refuses a plain http receiver when run with NODE_ENV=production', async () => {
    const org = (await intake('org', 'create', '--name', 'Production hooks')).json.organizationId as string;
    const production = { ...env, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://intake.example.com' };
    const refused = await runIntake(production, 'webhook', 'create', '--org', org, '--url', 'http://hooks.example.com/');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /url must be an https URL/);
    const accepted = await runIntake(production, 'webhook', 'create', '--org', org, '--url', 'https://hooks.example.com/');
    assert.equal(accepted.code, 0, accepted.stderr);
  });
});
