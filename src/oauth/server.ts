import type Provider from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { deriveKey } from '../auth/secrets.js';
import type { Config, OidcSignInConfig } from '../config.js';
import type { RateLimiter, RateLimitStore } from '../rate-limit.js';
import { loginLimits, type LoginLimits } from './interactions.js';
import { upstreamSignIn, type UpstreamSignIn } from './upstream.js';
import { createAuthorizationServer, MCP_SCOPES, mcpResource, type AuthorizationServerOptions } from './provider.js';

export type McpScope = (typeof MCP_SCOPES)[number];

/** An access token the authorization server issued, checked: whose, for which client, with which scopes. */
export interface OAuthAccess {
  userId: string;
  clientId: string;
  scopes: McpScope[];
  expiresAt: number;
}

/** The API's authorization server: the provider, its pages' limits, and the check of its tokens on /mcp. */
export interface OAuthServer {
  provider: Provider;
  issuer: string;
  resource: string;
  limits: LoginLimits;
  /** Per client address: client registrations an hour, authorization requests a minute (null: off). */
  endpointLimits: EndpointLimits;
  cookieKeys: string[];
  signingSecret: string;
  /** Upstream OpenID Connect sign-in, when configured. */
  upstream: UpstreamSignIn | undefined;
  /** An OAuth access token (opaque)? Tells it from the CLI's user access tokens, which are JWTs. */
  isAccessToken(token: string): boolean;
  /** The token's access, or 'invalid': unknown, expired, revoked, its grant revoked, or for another resource. */
  verify(token: string): Promise<OAuthAccess | 'invalid'>;
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
export function endpointLimits(store: RateLimitStore, o: { registrationsPerHour: number; authorizationsPerMinute: number }): EndpointLimits {
  return {
    registration: store.limiter('oauth-register', o.registrationsPerHour, { windowSeconds: 3600 }),
    authorization: store.limiter('oauth-authorize', o.authorizationsPerMinute),
  };
}

/** Where the upstream provider sends the browser back (register `<issuer>` + this there). */
export const UPSTREAM_CALLBACK_PATH = '/oauth/upstream/callback';

/** The issuer of a deployment: PUBLIC_BASE_URL, or in development `http://localhost:<PORT>` (createOAuthServer drops a trailing slash). */
export function oauthIssuer(config: Pick<Config, 'http'>): string {
  return config.http.publicBaseUrl ?? `http://localhost:${config.http.port}`;
}

/**
 * `issuer`: the public base URL (PUBLIC_BASE_URL; without it `http://localhost:<PORT>`), which MCP
 * clients compare with the protected-resource metadata's `authorization_servers`.
 */
export async function createOAuthServer(o: {
  issuer: string; pool: DatabasePool; signingSecret: string; rateLimits: RateLimitStore; trustProxy: boolean;
  /** TRUST_PROXY_HOPS (1 unless given). */
  trustProxyHops?: number;
  /** The API's error page (api/oauth/pages.ts): errors shown to the user rather than returned to the client. */
  renderError: AuthorizationServerOptions['renderError'];
  /** Sign-in at a company's OpenID Connect provider beside e-mail and password (config.signIn.oidc). */
  oidc?: OidcSignInConfig;
  accessTokenSeconds?: number;
  /** config.rateLimits: registrations an hour and authorization requests a minute per client address (0: off). */
  limits: { oauthRegistrationsPerHour: number; oauthAuthorizationsPerMinute: number };
}): Promise<OAuthServer> {
  const issuer = o.issuer.replace(/\/$/, '');
  const cookieKeys = [Buffer.from(deriveKey(o.signingSecret, 'oauth-cookies')).toString('base64url')];
  const provider = await createAuthorizationServer({
    issuer, pool: o.pool, signingSecret: o.signingSecret, cookieKeys, trustProxy: o.trustProxy, trustProxyHops: o.trustProxyHops, renderError: o.renderError, accessTokenSeconds: o.accessTokenSeconds,
  });
  const resource = mcpResource(issuer);
  return {
    provider, issuer, resource, limits: loginLimits(o.rateLimits), cookieKeys,
    endpointLimits: endpointLimits(o.rateLimits, { registrationsPerHour: o.limits.oauthRegistrationsPerHour, authorizationsPerMinute: o.limits.oauthAuthorizationsPerMinute }), signingSecret: o.signingSecret,
    upstream: o.oidc ? upstreamSignIn({ ...o.oidc, redirectUri: `${issuer}${UPSTREAM_CALLBACK_PATH}`, pool: o.pool }) : undefined,
    isAccessToken: (token) => /^[\w-]{32,128}$/.test(token),
    async verify(token) {
      // What introspection checks (oidc-provider's lib/actions/introspection.js): the token, its grant, who and for what.
      const at = await provider.AccessToken.find(token);
      if (!at?.accountId || !at.grantId || !at.clientId || ![at.aud].flat().includes(resource)) return 'invalid';
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
};
