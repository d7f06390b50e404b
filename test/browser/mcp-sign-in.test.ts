import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../src/db/pool.js';
import { UPSTREAM_CALLBACK_PATH } from '../../src/oauth/server.js';
import { startTestApi, type TestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createSignInUser, TEST_PASSWORD } from '../../harness/oauth-browser.js';
import { closeServer, listenLocal } from '../../harness/http.js';
import { TestClientProvider } from '../helpers/mcp-client.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { createTestDatabase } from '../../harness/stack.js';

const PASSWORD = TEST_PASSWORD;
/** Debian's chromium package (playwright-core cannot download browsers here); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The MCP client's loopback redirect (RFC 8252): takes the code, tells the user to go back to the application. */
class LoopbackRedirect {
  readonly server: Server;
  url = '';
  private waiting: ((query: URLSearchParams) => void) | undefined;
  private received: URLSearchParams | undefined;
  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/callback') {
        // The browser's own requests (a favicon) are not the redirect.
        res.statusCode = 404;
        res.end();
        return;
      }
      const query = url.searchParams;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Signed in</title><p>You can close this window and return to your application.</p>');
      this.received = query;
      this.waiting?.(query);
    });
  }
  async listen(): Promise<this> {
    this.url = `http://127.0.0.1:${await listenLocal(this.server)}/callback`;
    return this;
  }
  /** The query the browser came back with. */
  next(): Promise<URLSearchParams> {
    if (this.received) {
      const r = this.received;
      this.received = undefined;
      return Promise.resolve(r);
    }
    return new Promise((resolve) => {
      this.waiting = (q) => {
        this.waiting = undefined;
        this.received = undefined;
        resolve(q);
      };
    });
  }
}

/**
 * The authorization server's pages in a real browser (headless Chromium): a standard MCP client
 * (the official SDK) asks for access; a person signs in and approves by typing and clicking; the
 * browser returns to the client's loopback redirect; the client exchanges the code and calls a tool.
 * `npm run test:browser`.
 */
describe('MCP sign-in in a real browser (headless Chromium)', function () {
  this.timeout(120_000);
  let pool: DatabasePool;
  let api: TestApi;
  let idp: TestIdp;
  let browser: Browser;
  let redirect: LoopbackRedirect;
  let user: Awaited<ReturnType<typeof createSignInUser>>;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    idp = await startTestIdp();
    user = await createSignInUser(pool);
    api = await startTestApi({
      pool,
      databaseUrl,
      config: testConfig({
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: idp.clientId,
        OIDC_CLIENT_SECRET: idp.clientSecret,
        OIDC_DISPLAY_NAME: 'Example Corp',
        OIDC_ORGANIZATIONS: user.organizationId,
      }),
    });
    idp.register(`${api.url}${UPSTREAM_CALLBACK_PATH}`);
    redirect = await new LoopbackRedirect().listen();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
  });
  after(async () => {
    await browser?.close();
    await closeServer(redirect?.server);
    await api?.close();
    await idp?.close();
    await pool?.end();
  });

  /** A fresh browser profile on the authorization URL the client asked for; console errors (a CSP violation, say) are collected. */
  async function open(url: URL): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      // A page answered 401 (a wrong password) is logged as a failed load: not an error of the page.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url.toString());
    return { page, errors };
  }

  /** The client's first connection: it discovers the authorization server, registers, and asks for access. */
  async function clientAsksForAccess(name: string) {
    const provider = new TestClientProvider(redirect.url, name);
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider });
    await assert.rejects(new Client({ name, version: '1.0.0' }).connect(transport), UnauthorizedError);
    assert.ok(provider.authorizationUrl, 'the client opened the browser on the authorization URL');
    return provider;
  }

  /** Back at the client: the code for tokens, then a tool call. */
  async function clientFinishes(provider: TestClientProvider, code: string, projectName: string) {
    const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider });
    await transport.finishAuth(code);
    const client = new Client({ name: 'browser-test', version: '1.0.0' });
    await client.connect(transport);
    const created = (await client.callTool({ name: 'create-project', arguments: { name: projectName } })) as CallToolResult;
    await client.close();
    assert.notEqual(created.isError, true, JSON.stringify(created));
    assert.equal((created.structuredContent as { name: string }).name, projectName);
  }

  it('the user signs in with e-mail and password and approves; the client gets its code and calls a tool', async () => {
    const provider = await clientAsksForAccess('Browser test client');
    const { page, errors } = await open(provider.authorizationUrl!);
    await page.getByRole('heading', { name: 'Sign in to Intake' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Browser test client asks to connect to your Intake account/);
    // Accessible: the inputs are found by their labels, the buttons by their names.
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    assert.equal(await page.getByRole('alert').innerText(), 'The e-mail address or the password is wrong.');
    assert.equal(await page.getByLabel('E-mail').inputValue(), user.email, 'the address is kept');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.getByRole('heading', { name: 'Approve access' }).waitFor();
    const consent = await page.locator('main').innerText();
    assert.match(
      consent,
      new RegExp(`Browser test client \\(returning to 127\\.0\\.0\\.1:\\d+\\) asks to act as\\s+${user.email.replace(/[.+]/g, '\\$&')}`),
    );
    for (const scope of ['projects:read', 'sessions:upload', 'sessions:associate']) assert.ok(consent.includes(scope), scope);
    const back = redirect.next();
    await page.getByRole('button', { name: 'Approve' }).click();
    const query = await back;
    assert.equal(query.get('iss'), api.url);
    await page.getByText('You can close this window').waitFor();
    assert.deepEqual(errors, [], 'no console error: nothing the CSP blocked');
    await clientFinishes(provider, query.get('code')!, 'Approved in Chromium');
  });

  it('Deny sends the browser back to the client with access_denied', async () => {
    const provider = await clientAsksForAccess('Denied client');
    const { page } = await open(provider.authorizationUrl!);
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const back = redirect.next();
    await page.getByRole('button', { name: 'Deny' }).click();
    const query = await back;
    assert.equal(query.get('error'), 'access_denied');
    assert.equal(query.get('code'), null);
  });

  it('the user signs in at the company\'s provider instead ("Sign in with Example Corp")', async () => {
    idp.accounts.set('sso-user', { email: user.email, email_verified: true });
    idp.signInAs = 'sso-user';
    const provider = await clientAsksForAccess('SSO browser client');
    const { page, errors } = await open(provider.authorizationUrl!);
    await page.getByRole('button', { name: 'Sign in with Example Corp' }).click();
    await page.getByRole('heading', { name: 'Approve access' }).waitFor();
    assert.match(await page.locator('main').innerText(), new RegExp(user.email.replace(/[.+]/g, '\\$&')));
    const back = redirect.next();
    await page.getByRole('button', { name: 'Approve' }).click();
    const query = await back;
    assert.deepEqual(errors, []);
    await clientFinishes(provider, query.get('code')!, 'Approved through SSO');
  });
});
