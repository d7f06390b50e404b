/**
 * Sign-in through Intake's authorization server (decision 0205): authorization code with PKCE
 * (S256) for the first-party client `intake-console`, whose tokens are for the REST API. Tokens
 * are kept in this tab's sessionStorage (gone with the tab); the access token is refreshed a minute
 * before it expires, the refresh token rotates on each use, and signing out revokes it.
 */
const CLIENT_ID = 'intake-console';
const CALLBACK_PATH = '/console/callback';
const TOKENS_KEY = 'intake.console.tokens';
const PENDING_KEY = 'intake.console.signin';

interface Tokens {
  accessToken: string;
  refreshToken: string | null;
  /** Epoch ms. */
  expiresAt: number;
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
}

const redirectUri = () => `${location.origin}${CALLBACK_PATH}`;

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return btoa(String.fromCharCode(...b))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=/g, '');
}
const randomString = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

function stored(): Tokens | null {
  const raw = sessionStorage.getItem(TOKENS_KEY);
  return raw ? (JSON.parse(raw) as Tokens) : null;
}
function store(t: TokenResponse, previousRefresh: string | null = null): Tokens {
  const tokens = {
    accessToken: t.access_token,
    refreshToken: t.refresh_token ?? previousRefresh,
    expiresAt: Date.now() + t.expires_in * 1000,
  };
  sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
  return tokens;
}

export function signedIn(): boolean {
  return stored() !== null;
}

/** Off to the authorization server; back at /console/callback with a code. `returnTo`: where to land after. */
export async function beginSignIn(returnTo: string): Promise<void> {
  if (!crypto.subtle) throw new Error('Signing in needs a secure context: open the console over HTTPS (or on localhost).');
  const verifier = randomString();
  const state = randomString();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, returnTo }));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: redirectUri(),
    scope: 'console',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  location.assign(`/oauth/authorize?${query.toString()}`);
}

async function tokenRequest(form: Record<string, string>): Promise<TokenResponse> {
  const res = await fetch('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }).toString(),
  });
  const body = (await res.json().catch(() => ({}))) as TokenResponse & { error?: string; error_description?: string };
  if (!res.ok) throw new Error(body.error_description ?? body.error ?? `The token endpoint answered ${res.status}.`);
  return body;
}

/** The callback: checks the state, exchanges the code; answers where to go next. */
export async function completeSignIn(search: string): Promise<string> {
  const params = new URLSearchParams(search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  if (params.get('error')) throw new Error(params.get('error_description') ?? params.get('error') ?? 'The sign-in was refused.');
  if (!pending || params.get('state') !== pending.state)
    throw new Error('This sign-in was not started in this tab, or has expired. Sign in again.');
  const code = params.get('code');
  if (!code) throw new Error('The authorization server sent no code.');
  store(await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(), code_verifier: pending.verifier }));
  return pending.returnTo.startsWith('/console') ? pending.returnTo : '/console/';
}

let refreshing: Promise<Tokens | null> | null = null;

/** A live access token (refreshed when it expires within a minute), or null: sign in again. */
export async function accessToken(): Promise<string | null> {
  const tokens = stored();
  if (!tokens) return null;
  if (tokens.expiresAt - Date.now() > 60_000) return tokens.accessToken;
  if (!tokens.refreshToken) return null;
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken })
    .then((t) => store(t, tokens.refreshToken))
    .catch(() => {
      sessionStorage.removeItem(TOKENS_KEY);
      return null;
    })
    .finally(() => {
      refreshing = null;
    });
  return (await refreshing)?.accessToken ?? null;
}

/** Forgets the tokens here and revokes the refresh token (which ends its access tokens' grant too). */
export async function signOut(): Promise<void> {
  const tokens = stored();
  sessionStorage.removeItem(TOKENS_KEY);
  if (tokens?.refreshToken) {
    await fetch('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, token: tokens.refreshToken, token_type_hint: 'refresh_token' }).toString(),
    }).catch(() => undefined);
  }
}

/** Tokens the API refused (revoked, expired): forget them so the next page asks to sign in. */
export function forgetTokens(): void {
  sessionStorage.removeItem(TOKENS_KEY);
}
