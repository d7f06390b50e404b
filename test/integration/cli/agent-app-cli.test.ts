import { strict as assert } from 'node:assert';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { sessionRequest, userMessage } from '../../../harness/agents.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { runIntake } from '../../helpers/cli.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestDatabase } from '../../../harness/stack.js';

/** `intake agent-app create|update|secret|revoke` and `org update`, as operators run them. */
describe('intake admin CLI: agent applications', function () {
  this.timeout(90_000);
  let pool: DatabasePool;
  let api: TestApi;
  let env: Record<string, string>;
  const intake = (...args: string[]) => runIntake(env, ...args);

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

  const ingest = (secret: string, agentKey: string, body: Record<string, unknown> = {}) =>
    api.request('/v3/rest/agent-conversations/ingest', {
      method: 'POST',
      headers: { 'X-Service-Agent-Key': secret },
      json: { ...sessionRequest({ agentKey } as never, [userMessage(1, 'hi')]), ...body },
    });

  it('creates an application, issues a secret that ingests, updates every setting, revokes the secret', async () => {
    const org = await intake('org', 'create', '--name', 'Agents Inc', '--credits', '3');
    const user = await intake('user', 'create', '--org', org.json.organizationId, '--email', 'ops@example.com');
    const app = await intake(
      'agent-app',
      'create',
      '--org',
      org.json.organizationId,
      '--name',
      'Support bot',
      '--agent-key',
      'support-bot',
    );
    assert.equal(app.code, 0, app.stderr);
    assert.deepEqual(Object.keys(app.json).sort(), ['agentKey', 'applicationId']);
    assert.equal(app.json.agentKey, 'support-bot');

    const secret = await intake('agent-app', 'secret', '--app', app.json.applicationId);
    assert.equal(secret.code, 0, secret.stderr);
    assert.match(secret.json.secret, /^iak_[A-Za-z0-9_-]{43}$/);
    assert.equal((await ingest(secret.json.secret, 'support-bot')).status, 202);

    const updated = await intake(
      'agent-app',
      'update',
      '--app',
      app.json.applicationId,
      '--status',
      'disabled',
      '--content-capture',
      'off',
      '--redact-fields',
      'email,phone',
      '--redact-patterns',
      'Project X,ACME-42',
      '--retention-days',
      '30',
      '--environments',
      'production,staging',
      '--access',
      `users:${user.json.userId}`,
      '--name',
      'Support bot v2',
    );
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(
      { ...updated.json, createdAt: undefined, updatedAt: undefined },
      {
        applicationId: app.json.applicationId,
        organizationId: org.json.organizationId,
        name: 'Support bot v2',
        agentKey: 'support-bot',
        status: 'disabled',
        contentCapture: false,
        redactedFieldNames: ['email', 'phone'],
        redactedTextPatterns: ['Project X', 'ACME-42'],
        retentionDays: 30,
        allowedEnvironments: ['production', 'staging'],
        conversationAccess: { type: 'users', userIds: [user.json.userId] },
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal((await ingest(secret.json.secret, 'support-bot')).status, 403);

    const reset = await intake(
      'agent-app',
      'update',
      '--app',
      app.json.applicationId,
      '--status',
      'active',
      '--retention-days',
      'none',
      '--environments',
      'any',
      '--access',
      'workspace',
      '--content-capture',
      'on',
    );
    assert.deepEqual(
      [reset.json.retentionDays, reset.json.allowedEnvironments, reset.json.conversationAccess],
      [null, [], { type: 'workspace' }],
    );
    assert.equal((await ingest(secret.json.secret, 'support-bot')).status, 202);

    const orgOff = await intake('org', 'update', '--org', org.json.organizationId, '--agent-chats', 'off');
    assert.equal(orgOff.json.agentChatsEnabled, false);
    assert.equal((await ingest(secret.json.secret, 'support-bot')).status, 404);
    await intake('org', 'update', '--org', org.json.organizationId, '--agent-chats', 'on');

    const revoked = await intake('agent-app', 'revoke', '--credential', secret.json.credentialId);
    assert.equal(revoked.code, 0);
    assert.equal(revoked.json.credentialId, secret.json.credentialId);
    assert.ok(!Number.isNaN(Date.parse(revoked.json.revokedAt)));
    const refused = await ingest(secret.json.secret, 'support-bot');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.errorCode, 'credential_revoked');
  });

  it('reports bad input on stderr with a non-zero exit', async () => {
    const org = await intake('org', 'create', '--name', 'Bad input');
    const app = await intake('agent-app', 'create', '--org', org.json.organizationId, '--name', 'A', '--agent-key', 'a');
    const id = app.json.applicationId as string;
    const cases: [string[], RegExp, number][] = [
      [['agent-app', 'create', '--org', org.json.organizationId, '--name', 'B', '--agent-key', 'a'], /agentKey 'a' already exists/, 1],
      [['agent-app', 'create', '--org', org.json.organizationId, '--name', 'B', '--agent-key', 'has space'], /--agent-key must be/, 2],
      [['agent-app', 'update', '--app', id], /nothing to update/, 2],
      [['agent-app', 'update', '--app', id, '--retention-days', '3651'], /--retention-days must be 1 to 3650 or none/, 2],
      [['agent-app', 'update', '--app', id, '--retention-days', '0'], /--retention-days must be 1 to 3650 or none/, 2],
      [['agent-app', 'update', '--app', id, '--status', 'paused'], /--status must be active or disabled/, 2],
      [['agent-app', 'update', '--app', id, '--content-capture', 'maybe'], /--content-capture must be on or off/, 2],
      [['agent-app', 'update', '--app', id, '--access', 'users:nope'], /--access must be workspace or users:/, 2],
      [
        ['agent-app', 'update', '--app', id, '--access', 'users:00000000-0000-4000-8000-000000000000'],
        /is not an active user of this organization/,
        1,
      ],
      [['agent-app', 'update', '--app', '00000000-0000-4000-8000-000000000000', '--status', 'active'], /agent application .* not found/, 1],
      [['agent-app', 'secret', '--app', 'nope'], /agent application nope not found/, 1],
      [['agent-app', 'revoke', '--credential', 'nope'], /agent credential nope not found/, 1],
      [['org', 'update', '--org', org.json.organizationId, '--agent-chats', 'yes'], /--agent-chats must be on or off/, 2],
    ];
    for (const [args, message, code] of cases) {
      const result = await intake(...args);
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '', args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
    }
  });
});
