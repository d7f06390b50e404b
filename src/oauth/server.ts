import { LRUCache } from 'lru-cache';
import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { deriveKey } from '../auth/secrets.js';
import type { OidcSignInConfig } from '../config.js';
import type { RateLimiter, RateLimitStore } from '../rate-limit.js';
import { loginLimits, type LoginLimits } from './interactions.js';
import { upstreamSignIn, type UpstreamSignIn } from './upstream.js';
import { CONSOLE_CLIENT_ID, restResource } from './console-client.js';
import { createAuthorizationServer, MCP_SCOPES, mcpResource, type AuthorizationServerOptions } from './provider.js';

export type McpScope = (typeof MCP_SCOPES)[number];

/** An access token the authorization server issued, checked: whose, for which client, with which scopes. */
export interface OAuthAccess {
  userId: string;
  clientId: string;
  scopes: McpScope[];
  expiresAt: number;
}

/** What a token is for: /mcp (every registered client) or the REST API (the console alone). */
export type OAuthAudience = 'mcp' | 'rest';

/** One issuer's authorization server: the provider and the check of its tokens on /mcp and the REST API. */
export interface OAuthServer {
  provider: Provider;
  issuer: string;
  resource: string;
  /** Upstream OpenID Connect sign-in, when configured. */
  upstream: UpstreamSignIn | undefined;
  /** The token's access, or 'invalid': unknown, expired, revoked, its grant revoked, or for another resource. */
  verify(token: string, audience?: OAuthAudience): Promise<OAuthAccess | 'invalid'>;
}

/**
 * The API's authorization servers. With PUBLIC_BASE_URL there is one issuer. Without it (development)
 * the issuer is the base URL a request came to, as every other link: `http://localhost:8080` and
 * `http://127.0.0.1:8080` each get theirs, so an MCP client finds the resource it was given at the
 * address it was given (an issuer fixed to one loopback name failed the other's resource check).
 * All share one store: a client registered at one is known at all; a token is for its issuer's
 * resource only.
 */
export interface OAuthServers {
  /** The server of a request's base URL (PUBLIC_BASE_URL's whatever the request says, when set). */
  forBase(base: string): Promise<OAuthServer>;
  limits: LoginLimits;
  /** Per client address: client registrations an hour, authorization requests a minute (null: off). */
  endpointLimits: EndpointLimits;
  cookieKeys: string[];
  signingSecret: string;
  /** An OAuth access token (opaque)? Tells it from the CLI's user access tokens, which are JWTs. */
  isAccessToken(token: string): boolean;
}

export interface EndpointLimits {
  registration: RateLimiter | null;
  authorization: RateLimiter | null;
}

/**
 * Registration and authorization are anonymous (MCP clients register themselves): each is counted
 * per client address, so that one address cannot fill the table with clients or the pages with
 * interactions.
 */
export function endpointLimits(
  store: RateLimitStore,
  o: { registrationsPerHour: number; authorizationsPerMinute: number },
): EndpointLimits {
  return {
    registration: store.limiter('oauth-register', o.registrationsPerHour, { windowSeconds: 3600 }),
    authorization: store.limiter('oauth-authorize', o.authorizationsPerMinute),
  };
}

/** Where the upstream provider sends the browser back (register `<issuer>` + this there). */
export const UPSTREAM_CALLBACK_PATH = '/oauth/upstream/callback';

/** Issuers served at once without PUBLIC_BASE_URL (loopback names, a LAN address): the least recently used goes. */
const MAX_ISSUERS = 8;

export interface OAuthServersOptions {
  /** PUBLIC_BASE_URL: the one issuer; absent, each request's base URL is its issuer. */
  issuer: string | undefined;
  pool: DatabasePool;
  signingSecret: string;
  rateLimits: RateLimitStore;
  trustProxy: boolean;
  /** TRUST_PROXY_HOPS (1 unless given). */
  trustProxyHops?: number;
  /** The API's error page (api/oauth/pages.ts): errors shown to the user rather than returned to the client. */
  renderError: AuthorizationServerOptions['renderError'];
  /** Sign-in at a company's OpenID Connect provider beside e-mail and password (config.signIn.oidc). */
  oidc?: OidcSignInConfig;
  accessTokenSeconds?: number;
  /** config.rateLimits: registrations an hour and authorization requests a minute per client address (0: off). */
  limits: { oauthRegistrationsPerHour: number; oauthAuthorizationsPerMinute: number };
}

/**
 * `issuer`: the public base URL, which MCP clients compare with the protected-resource metadata's
 * `authorization_servers`; without one, the base URL of each request (see OAuthServers).
 */
export async function createOAuthServers(o: OAuthServersOptions): Promise<OAuthServers> {
  const cookieKeys = [Buffer.from(deriveKey(o.signingSecret, 'oauth-cookies')).toString('base64url')];
  const servers = new LRUCache<string, Promise<OAuthServer>>({ max: MAX_ISSUERS });
  const forIssuer = (issuer: string): Promise<OAuthServer> => {
    let server = servers.get(issuer);
    if (!server) {
      server = createIssuerServer(o, issuer, cookieKeys);
      servers.set(issuer, server);
      server.catch(() => servers.delete(issuer));
    }
    return server;
  };
  const fixed = o.issuer?.replace(/\/$/, '');
  if (fixed) await forIssuer(fixed);
  return {
    forBase: (base) => forIssuer(fixed ?? base.replace(/\/$/, '')),
    limits: loginLimits(o.rateLimits),
    cookieKeys,
    signingSecret: o.signingSecret,
    endpointLimits: endpointLimits(o.rateLimits, {
      registrationsPerHour: o.limits.oauthRegistrationsPerHour,
      authorizationsPerMinute: o.limits.oauthAuthorizationsPerMinute,
    }),
    isAccessToken: (token) => /^[\w-]{32,128}$/.test(token),
  };
}

async function createIssuerServer(o: OAuthServersOptions, issuer: string, cookieKeys: string[]): Promise<OAuthServer> {
  const provider = await createAuthorizationServer({
    issuer,
    pool: o.pool,
    signingSecret: o.signingSecret,
    cookieKeys,
    trustProxy: o.trustProxy,
    trustProxyHops: o.trustProxyHops,
    renderError: o.renderError,
    accessTokenSeconds: o.accessTokenSeconds,
  });
  const resource = mcpResource(issuer);
  return {
    provider,
    issuer,
    resource,
    upstream: o.oidc ? upstreamSignIn({ ...o.oidc, redirectUri: `${issuer}${UPSTREAM_CALLBACK_PATH}`, pool: o.pool }) : undefined,
    async verify(token, audience = 'mcp') {
      // What introspection checks (oidc-provider's lib/actions/introspection.js): the token, its grant, who and for what.
      const at = await provider.AccessToken.find(token);
      const wanted = audience === 'rest' ? restResource(issuer) : resource;
      if (!at?.accountId || !at.grantId || !at.clientId || ![at.aud].flat().includes(wanted)) return 'invalid';
      if ((audience === 'rest') !== (at.clientId === CONSOLE_CLIENT_ID)) return 'invalid';
      const grant = await provider.Grant.find(at.grantId);
      if (!grant || grant.clientId !== at.clientId || grant.accountId !== at.accountId) return 'invalid';
      const scopes = (at.scope ?? '').split(' ').filter((s): s is McpScope => (MCP_SCOPES as readonly string[]).includes(s));
      return { userId: at.accountId, clientId: at.clientId, scopes, expiresAt: at.exp ?? 0 };
    },
  };
}

/** The scope each MCP tool needs. */
export const TOOL_SCOPES: Record<string, McpScope> = {
  'create-project': 'sessions:associate',
  'upload-agent-session': 'sessions:upload',
  'associate-agent-session': 'sessions:associate',
  'get-project': 'projects:read',
  'list-associated-agent-sessions': 'projects:read',
  'list-agent-sessions': 'projects:read',
};
