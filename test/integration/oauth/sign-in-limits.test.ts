import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { setPassword } from '../../../src/auth/sign-in.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { createUser } from '../../../src/db/repositories/users.js';
import {
  LOGIN_ATTEMPTS_PER_ACCOUNT,
  LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS,
  LOGIN_ATTEMPTS_PER_ADDRESS,
  LOGIN_ATTEMPTS_PER_DEVICE,
} from '../../../src/oauth/interactions.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { testConfig } from '../../../harness/config.js';
import { createTestOrg } from '../../../harness/fixtures.js';
import { authorizationRequest, Browser, csrfOf, registerClient, TEST_PASSWORD } from '../../../harness/oauth-browser.js';
import { createTestDatabase } from '../../../harness/stack.js';

const REDIRECT = 'http://127.0.0.1:40113/callback';

/**
 * Sign-in limits that a client cannot step around (issue 29, point 9): behind a proxy the address
 * is the one the proxy saw, not one the client wrote into X-Forwarded-For; every spelling of an
 * e-mail address that finds an account counts against that account; and guessing from one address
 * does not lock the account's owner out elsewhere, while a guesser spread over many addresses
 * still meets a per-account limit. Issue 50, finding 7: an IPv6 client is its /64, and a browser the
 * owner signed in from before (a known device) is not locked out by that per-account limit.
 */
describe('MCP authorization: sign-in limits behind a proxy, per account and per address', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  const apis: TestApi[] = [];
  let databaseUrl: string;
  let octet = 0;
  /** An address of its own for each part of a test (TEST-NET-3), so that the parts do not share counters. */
  const address = () => `203.0.113.${++octet}`;
  let network = 0;
  /** A /64 of its own (documentation prefix, RFC 3849): `host(n)` is its nth address. */
  const ipv6Network = () => {
    const prefix = `2001:db8:50:${(++network).toString(16)}`;
    return { host: (n: number) => `${prefix}:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}:1:${(n % 7).toString(16)}` };
  };

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
  });
  after(async () => {
    for (const api of apis) await api.close();
    await pool?.end();
  });

  /** The API behind a proxy (TRUST_PROXY), with sign-in limits counted in PostgreSQL as in production. */
  async function behindProxy(env: Record<string, string> = {}): Promise<{ api: TestApi; clientId: string }> {
    const api = await startTestApi({ pool, databaseUrl, config: testConfig({ TRUST_PROXY: 'true', ...env }) });
    apis.push(api);
    const reg = await registerClient(api.url, { redirect_uris: [REDIRECT], client_name: 'Limits client', application_type: 'web' });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    return { api, clientId: reg.body.client_id as string };
  }

  /** A sign-in page in a browser of its own; `attempt` posts the form as if through the proxy with that X-Forwarded-For. */
  async function signInPage(api: TestApi, clientId: string, browser = new Browser(api.url)) {
    const { url } = authorizationRequest(api.url, { clientId, redirectUri: REDIRECT, scope: 'projects:read' });
    const page = await browser.follow(await browser.go(url.pathname + url.search));
    assert.equal(page.status, 200);
    const uid = new URL(page.url).pathname.split('/').pop()!;
    const csrf = csrfOf(await page.text());
    return {
      attempt: async (forwardedFor: string, email: string, password: string) => {
        const res = await browser.go(`/oauth/interaction/${uid}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
          body: new URLSearchParams({ csrf, email, password }).toString(),
        });
        await res.arrayBuffer();
        return res;
      },
    };
  }

  async function signInUser(email: string): Promise<void> {
    const org = await createTestOrg(pool);
    const user = await createUser(pool, { organizationId: org.organizationId, email, role: 'member' });
    await setPassword(pool, user.id, TEST_PASSWORD);
  }

  it('keys the per-address limit on the address the proxy saw: a forged leftmost X-Forwarded-For does not help', async () => {
    const { api, clientId } = await behindProxy();
    const page = await signInPage(api, clientId);
    const client = address();
    // Each attempt forges another leftmost entry; the proxy appends the address it saw (one hop).
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_ADDRESS; i++) {
      const res = await page.attempt(
        `198.51.100.${i}, ${client}`,
        `nobody${i}-${randomBytes(4).toString('hex')}@example.com`,
        'a wrong password, surely',
      );
      assert.equal(res.status, 401, `attempt ${i + 1}`);
    }
    const limited = await page.attempt(
      `198.51.100.250, ${client}`,
      `nobody-else-${randomBytes(4).toString('hex')}@example.com`,
      'a wrong password, surely',
    );
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Another client of the same proxy is its own address.
    assert.equal(
      (
        await page.attempt(
          `198.51.100.250, ${address()}`,
          `fresh-${randomBytes(4).toString('hex')}@example.com`,
          'a wrong password, surely',
        )
      ).status,
      401,
    );
  });

  it('TRUST_PROXY_HOPS: with two proxies the address is the one the outer proxy saw', async () => {
    const { api, clientId } = await behindProxy({ TRUST_PROXY_HOPS: '2' });
    const page = await signInPage(api, clientId);
    const client = address();
    const inner = '10.1.2.3';
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_ADDRESS; i++) {
      const res = await page.attempt(
        `192.0.2.${i}, ${client}, ${inner}`,
        `hops${i}-${randomBytes(4).toString('hex')}@example.com`,
        'a wrong password, surely',
      );
      assert.equal(res.status, 401, `attempt ${i + 1}`);
    }
    assert.equal(
      (
        await page.attempt(
          `192.0.2.250, ${client}, ${inner}`,
          `hops-${randomBytes(4).toString('hex')}@example.com`,
          'a wrong password, surely',
        )
      ).status,
      429,
    );
    // The inner proxy's address is not the client's: another client through the same two proxies is not limited.
    assert.equal(
      (await page.attempt(`${address()}, ${inner}`, `hops-${randomBytes(4).toString('hex')}@example.com`, 'a wrong password, surely'))
        .status,
      401,
    );
  });

  it('counts every spelling of an e-mail address that finds the account against that account (İ for i)', async () => {
    const { api, clientId } = await behindProxy();
    const email = `iris.ivi.lili.${randomBytes(3).toString('hex')}@example.com`;
    await signInUser(email);
    const positions = [...email].flatMap((c, i) => (c === 'i' ? [i] : []));
    assert.ok(positions.length >= 6);
    /** The address with a dotted capital I (U+0130) at the positions whose bits are set in `mask`. */
    const variant = (mask: number) =>
      [...email].map((c, i) => (positions.includes(i) && mask & (1 << positions.indexOf(i)) ? '\u0130' : c)).join('');

    // Each spelling finds the account (PostgreSQL lowers İ to i), so each is the same account.
    const proof = await (await signInPage(api, clientId)).attempt(address(), variant(0b101), TEST_PASSWORD);
    assert.equal(proof.status, 303, 'the variant signs in');

    const page = await signInPage(api, clientId);
    const from = address();
    for (let mask = 1; mask <= LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS; mask++) {
      assert.equal((await page.attempt(from, variant(mask), `wrong guess ${mask}`)).status, 401, `variant ${mask}`);
    }
    const limited = await page.attempt(from, variant(LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS + 1), TEST_PASSWORD);
    assert.equal(limited.status, 429, 'a new spelling is the same account: no fresh bucket');
  });

  it('a guesser at one address does not lock the account out for its owner elsewhere', async () => {
    const { api, clientId } = await behindProxy();
    const email = `owner.${randomBytes(4).toString('hex')}@example.com`;
    await signInUser(email);
    const attacker = await signInPage(api, clientId);
    const from = address();
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS; i++) {
      assert.equal((await attacker.attempt(from, email, `wrong guess ${i}`)).status, 401);
    }
    const stopped = await attacker.attempt(from, email, `wrong guess again`);
    assert.equal(stopped.status, 429, 'the guessing address is stopped');
    assert.ok(Number(stopped.headers.get('retry-after')) <= 60);

    const owner = await (await signInPage(api, clientId)).attempt(address(), email.toUpperCase(), TEST_PASSWORD);
    assert.equal(owner.status, 303, 'the owner, at another address, signs in');
  });

  it('a guesser spread over many addresses meets the per-account limit (slower and looser), which even the right password then waits for in a browser not known to the account', async () => {
    const { api, clientId } = await behindProxy();
    const email = `spread.${randomBytes(4).toString('hex')}@example.com`;
    await signInUser(email);
    const page = await signInPage(api, clientId);
    // Below every per-address limit: a few guesses from each address.
    const perAddress = LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS - 1;
    let made = 0;
    while (made < LOGIN_ATTEMPTS_PER_ACCOUNT) {
      const from = address();
      for (let i = 0; i < perAddress && made < LOGIN_ATTEMPTS_PER_ACCOUNT; i++, made++) {
        assert.equal((await page.attempt(from, email, `distributed guess ${made}`)).status, 401, `guess ${made + 1}`);
      }
    }
    const limited = await (await signInPage(api, clientId)).attempt(address(), email, TEST_PASSWORD);
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 60, 'the per-account window is longer than a minute');
  });

  it('counts an IPv6 client by its /64: 40 addresses of one /64 meet the per-address limit, another /64 does not', async () => {
    const { api, clientId } = await behindProxy();
    const page = await signInPage(api, clientId);
    const net = ipv6Network();
    const guess = (from: string, i: number) =>
      page.attempt(from, `v6-${i}-${randomBytes(4).toString('hex')}@example.com`, 'a wrong password');
    const statuses: number[] = [];
    for (let i = 1; i <= 40; i++) {
      const res = await guess(net.host(i * 7919), i);
      statuses.push(res.status);
      if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After of attempt ${i}`);
    }
    assert.deepEqual(statuses, [
      ...Array<number>(LOGIN_ATTEMPTS_PER_ADDRESS).fill(401),
      ...Array<number>(40 - LOGIN_ATTEMPTS_PER_ADDRESS).fill(429),
    ]);
    assert.equal((await guess(ipv6Network().host(1), 41)).status, 401, 'another /64 is another client');
  });

  it('the owner signs in from a browser known to the account while guessing from 10 addresses holds the account; elsewhere the right password waits', async () => {
    const { api, clientId } = await behindProxy();
    const email = `known.${randomBytes(4).toString('hex')}@example.com`;
    await signInUser(email);
    const ownersBrowser = new Browser(api.url);
    const home = address();
    assert.equal((await (await signInPage(api, clientId, ownersBrowser)).attempt(home, email, TEST_PASSWORD)).status, 303);

    // The guesser's browser is known too, for an account of its own: that does not make it known to the owner's.
    const guessersEmail = `guesser.${randomBytes(4).toString('hex')}@example.com`;
    await signInUser(guessersEmail);
    const guessersBrowser = new Browser(api.url);
    assert.equal((await (await signInPage(api, clientId, guessersBrowser)).attempt(address(), guessersEmail, TEST_PASSWORD)).status, 303);
    const guesser = await signInPage(api, clientId, guessersBrowser);
    const addresses = LOGIN_ATTEMPTS_PER_ACCOUNT / LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS;
    assert.equal(addresses, 10);
    // 10 guesses from each of 10 addresses: the owner's own sign-in above was the hour's first attempt, so the 100th guess is refused.
    const statuses: number[] = [];
    for (let a = 0; a < addresses; a++) {
      const from = address();
      for (let i = 0; i < LOGIN_ATTEMPTS_PER_ACCOUNT_ADDRESS; i++) {
        const res = await guesser.attempt(from, email, `guess ${a}.${i}`);
        statuses.push(res.status);
        if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) > 60, 'the per-account hour');
      }
    }
    assert.deepEqual(
      statuses,
      [...Array<number>(LOGIN_ATTEMPTS_PER_ACCOUNT - 1).fill(401), 429],
      'the account is held for browsers not known to it',
    );
    const stranger = await (await signInPage(api, clientId)).attempt(address(), email, TEST_PASSWORD);
    assert.equal(stranger.status, 429, 'the right password in a browser not known to the account waits for the hour');

    const owner = await signInPage(api, clientId, ownersBrowser);
    assert.equal((await owner.attempt(home, email, 'a typo first')).status, 401, 'the known browser is let through, and told the truth');
    assert.equal((await owner.attempt(home, email, TEST_PASSWORD)).status, 303, 'the owner signs in');
    const travelling = await signInPage(api, clientId, ownersBrowser);
    assert.equal((await travelling.attempt(address(), email.toUpperCase(), TEST_PASSWORD)).status, 303, 'from another address too');
  });

  it(`a known browser has a budget of its own (${LOGIN_ATTEMPTS_PER_DEVICE} an hour), which does not use up the account's`, async () => {
    const { api, clientId } = await behindProxy();
    const email = `budget.${randomBytes(4).toString('hex')}@example.com`;
    await signInUser(email);
    const known = new Browser(api.url);
    assert.equal((await (await signInPage(api, clientId, known)).attempt(address(), email, TEST_PASSWORD)).status, 303);
    const page = await signInPage(api, clientId, known);
    // From an address each, below every per-address limit: only the device's budget counts them.
    for (let i = 0; i < LOGIN_ATTEMPTS_PER_DEVICE; i++) {
      assert.equal((await page.attempt(address(), email, `wrong ${i}`)).status, 401, `attempt ${i + 1} in the known browser`);
    }
    const spent = await page.attempt(address(), email, TEST_PASSWORD);
    assert.equal(spent.status, 429, 'the device has spent its hour');
    assert.ok(Number(spent.headers.get('retry-after')) > 60);
    const elsewhere = await (await signInPage(api, clientId)).attempt(address(), email, TEST_PASSWORD);
    assert.equal(elsewhere.status, 303, "the account's own hour is untouched");
  });
});
