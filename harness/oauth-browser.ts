import { createHash, randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { setPassword } from '../src/auth/sign-in.js';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID, CONSOLE_SCOPE } from '../src/oauth/console-client.js';
import { MCP_SCOPES } from '../src/oauth/provider.js';
import { createTestOrg, createTestUser } from './fixtures.js';
/** A browser as far as this flow needs one: cookies by name, redirects followed by hand. */
export class Browser {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [name, ...value] = pair!.split('=');
      if (/expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    return res;
  }
  post(path: string, form: Record<string, string>): Promise<Response> {
    return this.go(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
  /**
   * Follows redirects on this server (and on the `through` origins: an identity provider's);
   * stops at the first one elsewhere (the client's redirect URI), at one `stop` says is the
   * client's (the console's, on this server), or at a page.
   */
  async follow(res: Response, through: string[] = [], stop: (to: URL) => boolean = () => false): Promise<Response> {
    let r = res;
    let from = new URL(r.url || this.base);
    while (r.status >= 300 && r.status < 400) {
      const to = new URL(r.headers.get('location')!, from);
      if ((to.origin !== this.base && !through.includes(to.origin)) || stop(to)) return r;
      r = await this.go(to.toString());
      from = to;
    }
    return r;
  }
}

/** The form token of a sign-in or consent page. */
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * A user in a browser completing an authorization request: signs in on the login page, then
 * approves (or denies) on the consent page; returns where the server sent the browser back.
 */
export async function authorizeInBrowser(
  base: string,
  authorizationUrl: URL,
  user: { email: string; password: string },
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const browser = new Browser(base);
  const login = await browser.follow(await browser.go(authorizationUrl.pathname + authorizationUrl.search));
  const uid = new URL(login.url).pathname.split('/').pop()!;
  const consent = await browser.follow(
    await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: user.email, password: user.password }),
  );
  // Consent remembered (a web client the user approved before): straight back to the client.
  if (consent.status >= 300 && consent.status < 400) return new URL(consent.headers.get('location')!);
  if (consent.status !== 200) throw new Error(`sign-in failed: ${consent.status}`);
  const consentUid = new URL(consent.url).pathname.split('/').pop()!;
  const back = await browser.follow(
    await browser.post(`/oauth/interaction/${consentUid}/confirm`, { csrf: csrfOf(await consent.text()), decision }),
  );
  return new URL(back.headers.get('location')!);
}

/** Registers a public client (RFC 7591) as MCP clients do; returns its client_id, or the refusal. */
export async function registerClient(
  base: string,
  metadata: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...metadata,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** An authorization request with PKCE (S256) for the MCP resource: the URL and its verifier. */
export function authorizationRequest(
  base: string,
  o: { clientId: string; redirectUri: string; scope: string; state?: string },
): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', base);
  url.search = new URLSearchParams({
    client_id: o.clientId,
    response_type: 'code',
    redirect_uri: o.redirectUri,
    scope: o.scope,
    state: o.state ?? 'st',
    resource: `${base}/mcp`,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  return { url, verifier };
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
}

/** The token endpoint with a public client's form. */
export function tokenRequest(base: string, clientId: string, form: Record<string, string>): Promise<Response> {
  return fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, ...form }).toString(),
  });
}

/** The whole flow for a signed-in, approving user: sign-in, consent, code, tokens. */
export async function obtainTokens(
  base: string,
  o: { clientId: string; redirectUri: string; scope: string; user: { email: string; password: string } },
): Promise<TokenSet> {
  const { url, verifier } = authorizationRequest(base, o);
  const back = await authorizeInBrowser(base, url, o.user);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.toString()}`);
  const res = await tokenRequest(base, o.clientId, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: o.redirectUri,
    code_verifier: verifier,
    resource: `${base}/mcp`,
  });
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${await res.text()}`);
  return (await res.json()) as TokenSet;
}

/**
 * An access token for `/mcp` with every MCP scope, as an MCP client gets one (registration,
 * sign-in, approval, code exchange): what a test of the tools sends.
 */
export async function mcpAccessToken(base: string, user: { email: string; password: string }): Promise<string> {
  const redirectUri = 'http://127.0.0.1:40199/callback';
  const scope = MCP_SCOPES.join(' ');
  const reg = await registerClient(base, { redirect_uris: [redirectUri], client_name: 'Test MCP client', scope });
  if (reg.status !== 201) throw new Error(`registration: ${reg.status} ${JSON.stringify(reg.body)}`);
  return (await obtainTokens(base, { clientId: reg.body.client_id as string, redirectUri, scope, user })).access_token;
}

/** A JSON-RPC call to /mcp with a bearer token. */
export function mcpCall(base: string, token: string, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
}

/** The password the sign-in tests' users have. */
export const TEST_PASSWORD = 'correct horse battery staple';

/** A user who signs in with TEST_PASSWORD, in the given organization or one of their own. */
export async function createSignInUser(
  pool: DatabasePool,
  /** The user's organization; a new one when not given. */
  organizationId?: string,
  role: 'member' | 'admin' = 'member',
): Promise<{ userId: string; email: string; password: string; organizationId: string; accessToken: string }> {
  const org = organizationId ? { organizationId } : await createTestOrg(pool);
  const user = await createTestUser(pool, org.organizationId, role);
  await setPassword(pool, user.userId, TEST_PASSWORD);
  return { ...user, password: TEST_PASSWORD, organizationId: org.organizationId };
}

/** The console's authorization request (PKCE, its one scope, the REST API its default resource): the URL and its verifier. */
export function consoleAuthorizationRequest(base: string, state = 'console-st'): { url: URL; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', base);
  url.search = new URLSearchParams({
    client_id: CONSOLE_CLIENT_ID,
    response_type: 'code',
    redirect_uri: `${base}${CONSOLE_CALLBACK_PATH}`,
    scope: CONSOLE_SCOPE,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  return { url, verifier };
}

/**
 * What the console does to sign a user in, without a browser: the authorization request, the
 * sign-in page (no consent: the console is Intake's own), the callback's code, and the tokens.
 */
export async function consoleSignIn(
  base: string,
  user: { email: string; password: string },
): Promise<{ tokens: TokenSet; callback: URL; browser: Browser }> {
  const browser = new Browser(base);
  const { url, verifier } = consoleAuthorizationRequest(base);
  const atCallback = (to: URL) => to.pathname === CONSOLE_CALLBACK_PATH;
  const login = await browser.follow(await browser.go(url.pathname + url.search), [], atCallback);
  const uid = new URL(login.url).pathname.split('/').pop()!;
  const back = await browser.follow(
    await browser.post(`/oauth/interaction/${uid}/login`, { csrf: csrfOf(await login.text()), email: user.email, password: user.password }),
    [],
    atCallback,
  );
  if (back.status < 300 || back.status >= 400) throw new Error(`console sign-in did not return to the console: ${back.status} ${back.url}`);
  const callback = new URL(back.headers.get('location')!, base);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${callback.toString()}`);
  const res = await tokenRequest(base, CONSOLE_CLIENT_ID, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: `${base}${CONSOLE_CALLBACK_PATH}`,
    code_verifier: verifier,
  });
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${await res.text()}`);
  return { tokens: (await res.json()) as TokenSet, callback, browser };
}
