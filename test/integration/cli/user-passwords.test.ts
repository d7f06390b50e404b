import { strict as assert } from 'node:assert';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { verifySignIn } from '../../../src/auth/sign-in.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { runIntake, runIntakeWithInput } from '../../helpers/cli.js';
import { TEST_SIGNING_SECRET } from '../../../harness/config.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';

const PASSWORD = 'correct horse battery staple';

/** `intake user create --password-stdin` and `intake user set-password`: the login form's accounts. */
describe("intake CLI: users' sign-in passwords", function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let env: Record<string, string>;
  const hashOf = (userId: string) =>
    pool.oneFirst(sql.type(z.object({ password_hash: z.string().nullable() }))`
    SELECT password_hash FROM users WHERE id = ${userId}`);

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    env = { DATABASE_URL: databaseUrl, SIGNING_SECRET: TEST_SIGNING_SECRET, LOG_LEVEL: 'silent' };
  });
  after(async () => pool?.end());

  it('creates a user with a password from standard input, who then signs in with it (any case of the e-mail)', async () => {
    const org = await createTestOrg(pool);
    const created = await runIntakeWithInput(
      env,
      `${PASSWORD}\n`,
      'user',
      'create',
      '--org',
      org.organizationId,
      '--email',
      'Ada@Example.com',
      '--password-stdin',
    );
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(created.json, { userId: created.json.userId, email: 'Ada@Example.com', signIn: 'password' });
    assert.ok(!created.stdout.includes(PASSWORD) && !created.stderr.includes(PASSWORD));
    assert.match((await hashOf(created.json.userId as string))!, /^\$argon2id\$/);
    assert.equal((await verifySignIn(pool, 'ada@example.COM', PASSWORD))?.id, created.json.userId);
    assert.equal(
      await verifySignIn(pool, 'ada@example.com', `${PASSWORD}\n`),
      null,
      'the trailing newline of the input was not part of it',
    );
    assert.equal(await verifySignIn(pool, 'ada@example.com', 'correct horse battery stapler'), null);
    assert.equal(await verifySignIn(pool, 'nobody@example.com', PASSWORD), null);
  });

  it('sets and replaces a password by user id or by organization and e-mail; the old one stops working', async () => {
    const org = await createTestOrg(pool);
    const plain = await runIntake(env, 'user', 'create', '--org', org.organizationId, '--email', 'grace@example.com');
    assert.equal(plain.code, 0, plain.stderr);
    const userId = plain.json.userId as string;
    assert.equal(await hashOf(userId), null, 'no password: no sign-in');
    assert.equal(await verifySignIn(pool, 'grace@example.com', PASSWORD), null);

    const set = await runIntakeWithInput(env, PASSWORD, 'user', 'set-password', '--user', userId, '--password-stdin');
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(set.json, { userId, email: 'grace@example.com', signIn: 'password', revokedGrantIds: [], endedSessions: 0 });
    assert.equal((await verifySignIn(pool, 'grace@example.com', PASSWORD))?.id, userId);

    const replaced = await runIntakeWithInput(
      env,
      'another long passphrase\r\n',
      'user',
      'set-password',
      '--org',
      org.organizationId,
      '--email',
      'GRACE@example.com',
      '--password-stdin',
    );
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.equal(await verifySignIn(pool, 'grace@example.com', PASSWORD), null);
    assert.equal((await verifySignIn(pool, 'grace@example.com', 'another long passphrase'))?.id, userId);

    // A disabled user cannot sign in, whatever the password.
    await pool.query(sql.unsafe`UPDATE users SET status = 'disabled' WHERE id = ${userId}`);
    assert.equal(await verifySignIn(pool, 'grace@example.com', 'another long passphrase'), null);
  });

  it('refuses a short password, an empty input and a password given any other way; a refused create stores no user', async () => {
    const org = await createTestOrg(pool);
    const short = await runIntakeWithInput(
      env,
      'too short\n',
      'user',
      'create',
      '--org',
      org.organizationId,
      '--email',
      'short@example.com',
      '--password-stdin',
    );
    assert.equal(short.code, 2);
    assert.match(short.stderr, /at least 12 characters/);
    const users = await pool.oneFirst(
      sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM users WHERE organization_id = ${org.organizationId}`,
    );
    assert.equal(users, 0);

    const created = await runIntake(env, 'user', 'create', '--org', org.organizationId, '--email', 'lin@example.com');
    const empty = await runIntakeWithInput(env, '', 'user', 'set-password', '--user', created.json.userId as string, '--password-stdin');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /standard input is empty/);
    const noFlag = await runIntakeWithInput(env, PASSWORD, 'user', 'set-password', '--user', created.json.userId as string);
    assert.equal(noFlag.code, 2);
    assert.match(noFlag.stderr, /--password-stdin is required/);
    const asArgument = await runIntake(env, 'user', 'set-password', '--user', created.json.userId as string, '--password', PASSWORD);
    assert.equal(asArgument.code, 2, 'no --password flag exists');
    assert.equal(await hashOf(created.json.userId as string), null);
    const unknown = await runIntakeWithInput(
      env,
      PASSWORD,
      'user',
      'set-password',
      '--user',
      '00000000-0000-4000-8000-000000000000',
      '--password-stdin',
    );
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found/);
  });

  it("an e-mail address signs in to one account: a second organization's user with it cannot have a password too", async () => {
    const [a, b] = [await createTestOrg(pool), await createTestOrg(pool)];
    const first = await runIntakeWithInput(
      env,
      PASSWORD,
      'user',
      'create',
      '--org',
      a.organizationId,
      '--email',
      'shared@example.com',
      '--password-stdin',
    );
    assert.equal(first.code, 0, first.stderr);
    const plain = await runIntake(env, 'user', 'create', '--org', b.organizationId, '--email', 'Shared@example.com');
    assert.equal(plain.code, 0, 'a user without a password may share the address');
    const second = await runIntakeWithInput(
      env,
      'a different passphrase',
      'user',
      'set-password',
      '--user',
      plain.json.userId as string,
      '--password-stdin',
    );
    assert.equal(second.code, 1);
    assert.match(second.stderr, /already signs in with a password to a user of another organization/);
    assert.equal((await verifySignIn(pool, 'shared@example.com', PASSWORD))?.id, first.json.userId);
  });
});
