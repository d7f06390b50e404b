import { strict as assert } from 'node:assert';
import { copyFile, mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { migrate } from '../../../src/db/migrate.js';
import { createDatabasePool } from '../../../src/db/pool.js';
import { postgresAdapter } from '../../../src/oauth/adapter.js';
import { MIGRATIONS_DIR } from '../../../src/paths.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import {
  authorizationRequest,
  Browser,
  createSignInUser,
  csrfOf,
  mcpCall,
  registerClient,
  tokenRequest,
  type TokenSet,
} from '../../../harness/oauth-browser.js';
import { createEmptyDatabase, createTestDatabase } from '../../../harness/stack.js';

const REDIRECT = 'http://127.0.0.1:40115/callback';

/** Rows of oauth_models whose id, or whose payload, holds one of these values. */
async function rowsHolding(pool: DatabasePool, values: string[]): Promise<readonly { model: string }[]> {
  return pool.any(sql.type(z.object({ model: z.string() }))`
    SELECT model FROM oauth_models
    WHERE id = ANY(${sql.array(values, 'text')}) OR EXISTS (SELECT 1 FROM unnest(${sql.array(values, 'text')}) v WHERE strpos(payload::text, v) > 0)`);
}

/**
 * The authorization server's credentials are not kept in clear (issue 29, point 11): codes,
 * access and refresh tokens and sign-in sessions are stored under their SHA-256, and they work all
 * the same; rows stored before migration 0021 are rewritten and keep working.
 */
describe('MCP authorization: codes, tokens and sessions stored as hashes', function () {
  this.timeout(60_000);
  let pool: DatabasePool;
  let api: TestApi;

  before(async () => {
    pool = await createDatabasePool(await createTestDatabase());
    api = await startTestApi({ pool });
  });
  after(async () => {
    await api?.close();
    await pool?.end();
  });

  it('after a whole flow the table holds no code, token or session cookie in clear; each still works', async () => {
    const user = await createSignInUser(pool);
    const reg = await registerClient(api.url, { redirect_uris: [REDIRECT], client_name: 'Hashes' });
    const clientId = reg.body.client_id as string;
    const browser = new Browser(api.url);
    const { url, verifier } = authorizationRequest(api.url, { clientId, redirectUri: REDIRECT, scope: 'projects:read' });
    const login = await browser.follow(await browser.go(url.pathname + url.search));
    const uid = new URL(login.url).pathname.split('/').pop()!;
    const consent = await browser.follow(
      await browser.post(`/oauth/interaction/${uid}/login`, {
        csrf: csrfOf(await login.text()),
        email: user.email,
        password: user.password,
      }),
    );
    const consentUid = new URL(consent.url).pathname.split('/').pop()!;
    const back = await browser.follow(
      await browser.post(`/oauth/interaction/${consentUid}/confirm`, { csrf: csrfOf(await consent.text()), decision: 'approve' }),
    );
    const code = new URL(back.headers.get('location')!).searchParams.get('code')!;
    const session = (browser as unknown as { cookies: Map<string, string> }).cookies.get('_session');
    assert.ok(code && session, 'a code, and a sign-in session cookie');

    const exchanged = await tokenRequest(api.url, clientId, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      resource: `${api.url}/mcp`,
    });
    assert.equal(exchanged.status, 200);
    const first = (await exchanged.json()) as TokenSet;
    const refreshed = await tokenRequest(api.url, clientId, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      resource: `${api.url}/mcp`,
    });
    assert.equal(refreshed.status, 200, 'a refresh token is found by its hash');
    const second = (await refreshed.json()) as TokenSet;

    const secrets = [code, session, first.access_token, first.refresh_token, second.access_token, second.refresh_token];
    assert.deepEqual(await rowsHolding(pool, secrets), []);
    const stored = await pool.anyFirst(sql.type(z.object({ model: z.string() }))`
      SELECT DISTINCT model FROM oauth_models WHERE payload ->> 'accountId' = ${user.userId} ORDER BY model`);
    assert.deepEqual(stored, ['AccessToken', 'AuthorizationCode', 'Grant', 'RefreshToken', 'Session'], 'each was stored (under its hash)');

    assert.equal((await mcpCall(api.url, second.access_token)).status, 200, 'an access token is found by its hash');
    // The session still signs the user in: the next authorization skips the password.
    const again = authorizationRequest(api.url, { clientId, redirectUri: REDIRECT, scope: 'projects:read' });
    const next = await browser.follow(await browser.go(again.url.pathname + again.url.search));
    assert.match(await next.text(), /Approve access/);
    // Revocation finds the token by its hash too.
    const revoked = await fetch(`${api.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, token: second.access_token }).toString(),
    });
    assert.equal(revoked.status, 200);
    assert.equal((await mcpCall(api.url, second.access_token)).status, 401);
  });

  it('migration 0021 rewrites tokens stored in clear: the row no longer holds the token, which still works', async () => {
    const url = await createEmptyDatabase();
    const before = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-'));
    for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n.endsWith('.sql') && n < '0021')) {
      await copyFile(path.join(MIGRATIONS_DIR, name), path.join(before, name));
    }
    await migrate(url, before);
    const old = await createDatabasePool(url);
    try {
      const token = 'Ab3_cleartext-access-token-stored-before-0021-xyz';
      await old.query(sql.unsafe`
        INSERT INTO oauth_models (model, id, payload, expires_at) VALUES
          ('AccessToken', ${token}, ${sql.jsonb({ jti: token, grantId: 'g-old', accountId: 'u-old', kind: 'AccessToken' })}, now() + interval '10 minutes'),
          ('Client', 'client-old', ${sql.jsonb({ client_id: 'client-old' })}, NULL)`);
      await migrate(url);
      assert.deepEqual(await rowsHolding(old, [token]), []);
      const found = await new (postgresAdapter(old))('AccessToken').find(token);
      assert.deepEqual([found?.jti, found?.grantId, found?.accountId], [token, 'g-old', 'u-old']);
      assert.equal((await new (postgresAdapter(old))('Client').find('client-old'))?.client_id, 'client-old', 'clients keep their ids');
    } finally {
      await old.end();
    }
  });
});
