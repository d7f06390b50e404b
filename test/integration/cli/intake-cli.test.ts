import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../../src/db/pool.js';
import { writeStackInfo } from '../../../src/dev/stack-file.js';
import { packageVersion, PROJECT_ROOT } from '../../../src/paths.js';
import { startTestApi, testTokens, type TestApi } from '../../../harness/app.js';
import { runIntake, TS_NODE } from '../../helpers/cli.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createEmptyDatabase, createTestDatabase, testStack } from '../../../harness/stack.js';
import { startTestWorker } from '../../../harness/worker.js';
import { upsertPerson } from '../../../src/db/repositories/people.js';
import { personErasureWorkflowId } from '../../../src/temporal/ids.js';

const run = promisify(execFile);

/** The admin CLI as operators run it: a separate process, JSON on stdout, errors on stderr. */
describe('intake admin CLI', function () {
  // A test runs up to 16 CLI processes of about 2 s each (tsx's start); on 2 busy cores that doubles.
  this.timeout(120_000);
  let databaseUrl: string;
  let pool: DatabasePool;
  let api: TestApi;
  let env: Record<string, string>;

  const intake = (...args: string[]) => runIntake(env, ...args);

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    env = { DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  it('creates an organization, a user, a token, an API key; adds credits; revokes the key', async () => {
    const org = await intake('org', 'create', '--name', 'Acme', '--credits', '5');
    assert.equal(org.code, 0);
    assert.deepEqual(Object.keys(org.json).sort(), ['name', 'organizationId']);
    assert.equal(org.json.name, 'Acme');
    assert.equal(org.stdout.trim().split('\n').length, 1, 'exactly one JSON line on stdout');

    const user = await intake(
      'user',
      'create',
      '--org',
      org.json.organizationId,
      '--email',
      'Ada@Example.com',
      '--role',
      'admin',
      '--first-name',
      'Ada',
    );
    assert.equal(user.code, 0);
    assert.equal(user.json.email, 'Ada@Example.com');

    const token = await intake('token', 'issue', '--user', user.json.userId, '--ttl-seconds', '120');
    assert.equal(token.code, 0);
    const expiresIn = Date.parse(token.json.expiresAt) - Date.now();
    assert.ok(expiresIn > 100_000 && expiresIn <= 121_000, `expiresAt ~120 s ahead, got ${expiresIn} ms`);
    const me = await api.request(`/v3/rest/users/${user.json.userId}`, { headers: { Authorization: `Bearer ${token.json.accessToken}` } });
    assert.equal(me.status, 200);
    assert.equal(me.body.firstName, 'Ada');

    const key = await intake('api-key', 'create', '--org', org.json.organizationId, '--scopes', 'feedback:write,admin');
    assert.equal(key.code, 0);
    assert.match(key.json.apiKey, /^ik_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(key.json.scopes, ['feedback:write', 'admin']);

    const credits = await intake('credits', 'add', '--org', org.json.organizationId, '--amount', '20');
    assert.deepEqual(credits.json, { organizationId: org.json.organizationId, balance: 25, resumedSessions: 0 });
    const viaApi = await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': key.json.apiKey } });
    assert.equal(viaApi.body.creditBalance, 25);

    // Least privilege: without --scopes, every data scope and never admin.
    const plain = await intake('api-key', 'create', '--org', org.json.organizationId);
    assert.deepEqual(plain.json.scopes, [
      'feedback:write',
      'feedback:read',
      'recordings:read',
      'recordings:write',
      'agents:read',
      'agents:write',
      'signals:read',
    ]);
    const notAdmin = await api.request(`/v3/rest/users/${user.json.userId}`, { headers: { 'X-Service-Api-Key': plain.json.apiKey } });
    assert.equal(notAdmin.status, 403);
    assert.equal(notAdmin.body.errorCode, 'insufficient_scope');

    const revoked = await intake('api-key', 'revoke', '--id', key.json.apiKeyId);
    assert.equal(revoked.code, 0);
    assert.equal(revoked.json.apiKeyId, key.json.apiKeyId);
    assert.ok(!Number.isNaN(Date.parse(revoked.json.revokedAt)));
    const after = await api.request('/v3/rest/organization', { headers: { 'X-Service-Api-Key': key.json.apiKey } });
    assert.equal(after.status, 401);
    assert.equal(after.body.errorCode, 'credential_revoked');
  });

  it('revokes one user token, or every token of a user', async () => {
    const org = await intake('org', 'create', '--name', 'Tokens');
    const user = await intake('user', 'create', '--org', org.json.organizationId, '--email', 'tok@example.com');
    const me = (token: string) => api.request('/v3/rest/organization', { headers: { Authorization: `Bearer ${token}` } });
    const first = (await intake('token', 'issue', '--user', user.json.userId)).json;
    const second = (await intake('token', 'issue', '--user', user.json.userId)).json;
    assert.match(first.tokenId, /^[0-9a-f-]{36}$/);
    assert.equal((await me(first.accessToken)).status, 200);

    const one = await intake('token', 'revoke', '--token', first.accessToken);
    assert.equal(one.code, 0);
    assert.deepEqual(one.json, { tokenId: first.tokenId, userId: user.json.userId, revoked: 'token', expiresAt: first.expiresAt });
    const refused = await me(first.accessToken);
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, { message: 'The access token has been revoked.', errorCode: 'credential_revoked' });
    assert.equal((await me(second.accessToken)).status, 200, 'only that token');

    const all = await intake('token', 'revoke', '--user', user.json.userId);
    assert.deepEqual(all.json, { userId: user.json.userId, revoked: 'all', revokedGrantIds: [], endedSessions: 0 });
    assert.equal((await me(second.accessToken)).body.errorCode, 'credential_revoked');
    const third = (await intake('token', 'issue', '--user', user.json.userId)).json;
    assert.equal((await me(third.accessToken)).status, 200, 'tokens issued after the revocation work');
    // The tokenId that `token issue` printed is enough (issue 29.15).
    const byId = await intake('token', 'revoke', '--token', third.tokenId);
    assert.deepEqual([byId.code, byId.json], [0, { tokenId: third.tokenId, revoked: 'token' }]);
    assert.equal((await me(third.accessToken)).body.errorCode, 'credential_revoked');

    const expired = await testTokens().issue(
      { id: user.json.userId, organizationId: org.json.organizationId },
      60,
      new Date(Date.now() - 3_600_000),
    );
    assert.equal((await intake('token', 'revoke', '--token', expired.accessToken)).json.revoked, 'already expired');
    for (const [args, message] of [
      [['token', 'revoke'], /give either --token T or --user U/],
      [['token', 'revoke', '--token', 'not-a-token'], /not an access token this service issued/],
      [['token', 'revoke', '--user', '00000000-0000-4000-8000-000000000000'], /user .* not found/],
    ] as [string[], RegExp][]) {
      const result = await intake(...args);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
  });

  it('reports bad input on stderr with a non-zero exit and nothing on stdout', async () => {
    const cases: [string[], RegExp, number][] = [
      [['org', 'create'], /--name is required/, 2],
      [['org', 'create', '--name', 'X', '--credits=-1'], /--credits must be an integer/, 2],
      [['api-key', 'create', '--org', '00000000-0000-4000-8000-000000000000'], /organization .* not found/, 1],
      [['api-key', 'revoke', '--id', 'nope'], /API key nope not found/, 1],
      [['user', 'create', '--org', 'x', '--email', 'not-an-email'], /organization x not found/, 1],
      [['token', 'issue', '--user', '00000000-0000-4000-8000-000000000000'], /user .* not found/, 1],
      [['frobnicate'], /unknown command: frobnicate/, 2],
      [['org', 'create', '--name', 'X', '--bogus'], /Unknown option '--bogus'/, 2],
    ];
    for (const [args, message, code] of cases) {
      const result = await intake(...args);
      assert.equal(result.code, code, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
    }
  });

  it('finds what exists: org list|show, user list|show, api-key list, agent-app list|show, paged JSON', async () => {
    const org = await intake('org', 'create', '--name', 'Findable Ltd', '--credits', '7');
    const orgId = org.json.organizationId as string;
    const user = await intake('user', 'create', '--org', orgId, '--email', 'Lost.Person@Example.com', '--role', 'admin');
    const key = await intake('api-key', 'create', '--org', orgId, '--name', 'ci', '--scopes', 'feedback:read');
    await intake('api-key', 'revoke', '--id', key.json.apiKeyId);
    const app = await intake('agent-app', 'create', '--org', orgId, '--name', 'Support bot', '--agent-key', 'support');
    const secret = await intake('agent-app', 'secret', '--app', app.json.applicationId);

    // Every organization, paged: walk the pages until the new one shows up.
    const seen: { organizationId: string; name: string; creditBalance: number }[] = [];
    for (let page = 1; ; page++) {
      const listed = await intake('org', 'list', '--limit', '1000', '--page', String(page));
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(Object.keys(listed.json).sort(), ['has_more', 'limit', 'organizations', 'page']);
      seen.push(...listed.json.organizations);
      if (!listed.json.has_more) break;
    }
    const found = seen.find((o) => o.organizationId === orgId);
    assert.deepEqual([found?.name, found?.creditBalance], ['Findable Ltd', 7]);
    const small = await intake('org', 'list', '--limit', '1');
    assert.deepEqual([small.json.organizations.length, small.json.has_more], [1, true]);

    const shown = await intake('org', 'show', '--org', orgId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json.name, 'Findable Ltd');
    assert.equal(shown.json.agentChatsEnabled, true);
    assert.deepEqual(shown.json.counts, {
      users: 1,
      activeApiKeys: 0,
      agentApplications: 1,
      webhookEndpoints: 0,
      feedbackSources: 0,
      people: 0,
      recordings: 0,
      agentSessions: 0,
    });

    // A lost user id, found by address in any case, across organizations.
    const byEmail = await intake('user', 'list', '--email', 'lost.person@example.COM');
    assert.equal(byEmail.code, 0, byEmail.stderr);
    assert.deepEqual(
      byEmail.json.users.map((u: { userId: string; organizationId: string }) => [u.userId, u.organizationId]),
      [[user.json.userId, orgId]],
    );
    const users = await intake('user', 'list', '--org', orgId);
    assert.deepEqual(
      users.json.users.map((u: { email: string; role: string }) => [u.email, u.role]),
      [['Lost.Person@Example.com', 'admin']],
    );
    const one = await intake('user', 'show', '--user', user.json.userId);
    assert.deepEqual(one.json, byEmail.json.users[0]);

    const keys = await intake('api-key', 'list', '--org', orgId);
    assert.equal(keys.code, 0, keys.stderr);
    assert.equal(keys.json.apiKeys.length, 1);
    const [listedKey] = keys.json.apiKeys;
    assert.deepEqual([listedKey.apiKeyId, listedKey.name, listedKey.scopes], [key.json.apiKeyId, 'ci', ['feedback:read']]);
    assert.ok(listedKey.revokedAt, 'revoked keys are listed with revokedAt');
    assert.ok(!keys.stdout.includes(key.json.apiKey), 'never the key itself');

    const apps = await intake('agent-app', 'list', '--org', orgId);
    assert.deepEqual(
      apps.json.applications.map((a: { applicationId: string; name: string }) => [a.applicationId, a.name]),
      [[app.json.applicationId, 'Support bot']],
    );
    const appShown = await intake('agent-app', 'show', '--app', app.json.applicationId);
    assert.equal(appShown.json.agentKey, 'support');
    assert.deepEqual(
      appShown.json.credentials.map((c: { credentialId: string; revokedAt: string | null }) => [c.credentialId, c.revokedAt]),
      [[secret.json.credentialId, null]],
    );
    assert.ok(!appShown.stdout.includes(secret.json.secret), 'never the secret');

    for (const [args, message] of [
      [['org', 'show', '--org', '00000000-0000-4000-8000-000000000000'], /organization .* not found/],
      [['user', 'show', '--user', 'nope'], /user nope not found/],
      [['agent-app', 'show', '--app', 'nope'], /agent application nope not found/],
      [['org', 'list', '--limit', '0'], /--limit must be an integer from 1 to 1000/],
    ] as [string[], RegExp][]) {
      const result = await intake(...args);
      assert.notEqual(result.code, 0, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, message);
    }
  });

  it('prints usage for --help (all commands, or one) and the release for --version on stdout with exit 0', async () => {
    const help = async (...args: string[]) => {
      const { stdout, stderr } = await run(process.execPath, [...TS_NODE, path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts'), ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      assert.equal(stderr, '');
      return stdout;
    };
    const all = await help('--help');
    assert.match(all, /^usage: intake <command>/);
    for (const command of ['org list', 'user show', 'api-key list', 'agent-app show', 'webhook create', 'doctor']) {
      assert.match(all, new RegExp(`^  ${command}\\b`, 'm'), command);
    }
    assert.equal(await help('help'), all);
    assert.match(
      await help('org', 'list', '--help'),
      /^usage: intake org list \[--page N\] \[--limit L\] +\(every organization, oldest first\)\n$/,
    );
    assert.equal(await help('help', 'user', 'show'), 'usage: intake user show --user U\n');
    // The release, as package.json (and /healthz, OpenAPI, the image's labels) says it.
    assert.equal(await help('--version'), `${packageVersion()}\n`);
    // A group's help, asked for either way, lists its actions on stdout (issue 51: `org --help` was an unknown command).
    const orgHelp = await help('org', '--help');
    assert.match(orgHelp, /^usage: intake org <action> \[--flags\]\n {2}org create --name N/);
    assert.match(orgHelp, /^ {2}org import --org O/m);
    assert.doesNotMatch(orgHelp, /user create/);
    assert.equal(await help('help', 'org'), orgHelp);
    assert.equal(await help('org', '-h'), orgHelp);
    // Started through a symbolic link whose path has a space: the CLI runs (it exited 0 silently).
    const linkDir = await mkdtemp(path.join(os.tmpdir(), 'intake cli '));
    try {
      await symlink(path.join(PROJECT_ROOT, 'src'), path.join(linkDir, 'src link'));
      const linked = await run(process.execPath, [...TS_NODE, path.join(linkDir, 'src link', 'cli', 'main.ts'), '--version'], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
      });
      assert.deepEqual([linked.stdout, linked.stderr], [`${packageVersion()}\n`, '']);
    } finally {
      await rm(linkDir, { recursive: true, force: true });
    }
    // A group alone lists its actions (a usage error: exit 2, on stderr).
    const group = await intake('agent-app');
    assert.equal(group.code, 2);
    assert.match(group.stderr, /intake agent-app: give an action\n {2}agent-app create/);
  });

  it("batch create: an upload batch of a user, usable in that user's uploads", async () => {
    const org = await intake('org', 'create', '--name', 'Batches');
    const user = await intake('user', 'create', '--org', org.json.organizationId, '--email', 'batch@example.com');
    const batch = await intake('batch', 'create', '--user', user.json.userId);
    assert.equal(batch.code, 0, batch.stderr);
    assert.equal(batch.json.userId, user.json.userId);
    assert.match(batch.json.batchId, /^[0-9a-f-]{36}$/);
    const missing = await intake('batch', 'create', '--user', '00000000-0000-4000-8000-000000000000');
    assert.deepEqual([missing.code, missing.stdout], [1, '']);
    assert.match(missing.stderr, /user .* not found/);
  });

  it('person erase: the person becomes a tombstone and the erasure runs through Temporal (or the reconciler, without it)', async () => {
    const org = await intake('org', 'create', '--name', 'Erasures');
    const organizationId = org.json.organizationId as string;
    const person = await pool.transaction((tx) => upsertPerson(tx, { organizationId, email: 'cli.erase@example.com', firstName: 'Cleo' }));
    const worker = await startTestWorker(pool, { drainer: false });
    try {
      const temporalEnv = { ...env, TEMPORAL_ADDRESS: (await testStack()).temporal.address, TEMPORAL_TASK_QUEUE: worker.taskQueue };
      const erased = await runIntake(temporalEnv, 'person', 'erase', '--org', organizationId, '--person', String(person.person.id));
      assert.equal(erased.code, 0, erased.stderr);
      assert.deepEqual([erased.json.personUuid, erased.json.status, erased.json.requestedBy], [person.person.uuid, 'running', 'cli']);
      await api.temporal.client.workflow.getHandle(personErasureWorkflowId(erased.json.erasureId as string)).result();
      const shown = await intake('person', 'erasure', '--org', organizationId, '--erasure', erased.json.erasureId as string);
      assert.equal(shown.json.status, 'finished');
      const again = await runIntake(temporalEnv, 'person', 'erase', '--org', organizationId, '--person', person.person.uuid);
      assert.deepEqual([again.code, again.stdout], [1, '']);
      assert.match(again.stderr, /Person not found/);
    } finally {
      await worker.stop();
    }
    // No Temporal here: the person is erased at once, the workflow is left to the media reconciler.
    const other = await pool.transaction((tx) => upsertPerson(tx, { organizationId, email: 'cli.erase2@example.com' }));
    const offline = await intake('person', 'erase', '--org', organizationId, '--person', other.person.uuid);
    assert.equal(offline.code, 0, offline.stderr);
    assert.equal(offline.json.status, 'running');
    assert.match(offline.stderr, /not started .* the media reconciler starts it/);
  });

  it('meeting-providers --config: the recorder and transcriber this configuration builds, never their keys', async () => {
    const local = await runIntake({ ...env, RECORDER: 'local' }, 'meeting-providers', '--config');
    assert.equal(local.code, 0, local.stderr);
    assert.deepEqual([local.json.recorder.kind, local.json.transcriber.kind], ['local', 'none']);
    assert.deepEqual(local.json.platforms, ['zoom', 'google_meet', 'microsoft_teams', 'webex']);
    const recall = await runIntake(
      {
        ...env,
        RECORDER: 'recall',
        RECALL_BASE_URL: 'https://us-east-1.recall.ai',
        RECALL_API_KEY: 'very-secret-recall-key',
        TRANSCRIBER: 'openai',
        TRANSCRIBER_BASE_URL: 'https://api.openai.com/v1',
        TRANSCRIBER_API_KEY: 'very-secret-openai-key',
      },
      'meeting-providers',
      '--config',
    );
    assert.deepEqual(
      [recall.json.recorder.kind, recall.json.recorder.baseUrl, recall.json.recorder.apiKey],
      ['recall', 'https://us-east-1.recall.ai', 'set'],
    );
    assert.deepEqual(
      [recall.json.transcriber.kind, recall.json.transcriber.model, recall.json.transcriber.apiKey],
      ['openai', 'whisper-1', 'set'],
    );
    assert.equal(recall.stdout.includes('very-secret'), false);
    const incomplete = await runIntake({ ...env, RECORDER: 'recall' }, 'meeting-providers', '--config');
    assert.notEqual(incomplete.code, 0);
    assert.match(incomplete.stderr, /RECALL_BASE_URL/);
  });

  it('says so when the database is unreachable', async () => {
    const saved = env;
    env = { ...env, DATABASE_URL: 'postgres://intake:x@127.0.0.1:1/intake' };
    try {
      const result = await intake('org', 'create', '--name', 'Nowhere');
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /the database is not reachable .*DATABASE_URL right\?/);
    } finally {
      env = saved;
    }
  });

  it('runs as the package bin (bin/intake.js) too', async () => {
    const { stdout } = await run(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'intake.js'), 'org', 'create', '--name', 'Via bin'], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    assert.equal(JSON.parse(stdout).name, 'Via bin');
  });

  it('applies migrations with `npm run migrate` (src/cli/migrate.ts), then finds nothing to do', async () => {
    const empty = await createEmptyDatabase();
    const migrateCli = path.join(PROJECT_ROOT, 'src', 'cli', 'migrate.ts');
    const first = JSON.parse(
      (await run(process.execPath, [...TS_NODE, migrateCli], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: empty } })).stdout,
    );
    assert.ok(first.applied.length >= 1);
    const second = JSON.parse(
      (await run(process.execPath, [...TS_NODE, migrateCli], { env: { PATH: process.env.PATH ?? '', DATABASE_URL: empty } })).stdout,
    );
    assert.deepEqual(second, { applied: [], alreadyApplied: first.applied.length });
  });

  it("finds the dev stack's database when DATABASE_URL is unset", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-cli-'));
    await writeStackInfo(dataDir, {
      databaseUrl,
      temporalAddress: '127.0.0.1:1',
      temporalUiUrl: null,
      apiUrl: api.url,
      signingSecret: TEST_SIGNING_SECRET,
      pid: process.pid,
    });
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const org = await intake('org', 'create', '--name', 'From stack file');
    assert.equal(org.code, 0);
    assert.equal(org.json.name, 'From stack file');
    env = { DATA_DIR: path.join(dataDir, 'empty'), LOG_LEVEL: 'silent' };
    const none = await intake('org', 'create', '--name', 'Nowhere');
    assert.equal(none.code, 1);
    assert.match(none.stderr, /DATABASE_URL is not set and no dev stack is running/);
  });
});
