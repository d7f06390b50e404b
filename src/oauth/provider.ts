import Provider, { errors, type Configuration } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
import { findUserClientGrantId } from '../db/repositories/oauth-models.js';
import { findUser } from '../db/repositories/users.js';
import { postgresAdapter } from './adapter.js';
import { errorRedirectGuard } from './redirects.js';
import { clientMetadataCaps } from './client-metadata.js';
import { oauthSigningJwk } from './keys.js';
import { CONSOLE_CALLBACK_PATH, CONSOLE_CLIENT_ID, CONSOLE_CLIENT_NAME, CONSOLE_SCOPE, restResource } from './console-client.js';

/**
 * The scopes of the MCP tools: reading projects and the sessions associated with them; uploading
 * coding-agent sessions; creating projects and associating sessions with them.
 */
export const MCP_SCOPES = ['projects:read', 'sessions:upload', 'sessions:associate'] as const;

/**
 * Access tokens live 15 minutes. They are opaque and stored: /mcp looks each one up, so that a
 * revoked token or grant stops working at once (a JWT would live until it expires).
 */
export const ACCESS_TOKEN_SECONDS = 900;

export interface AuthorizationServerOptions {
  /** The public base URL, no trailing slash: the issuer (equal to PRM `authorization_servers[0]`). */
  issuer: string;
  pool: DatabasePool;
  signingSecret: string;
  /** Cookie signing keys (also the outer Koa app's `keys`). */
  cookieKeys: string[];
  /** Believe X-Forwarded-Proto and -Host (TRUST_PROXY): endpoint URLs and secure cookies follow them. */
  trustProxy?: boolean;
  /** TRUST_PROXY_HOPS: the client's address is the X-Forwarded-For entry this many from the right. */
  trustProxyHops?: number;
  /** The page of an error shown to the user rather than returned to the client (an unregistered redirect URI, say). */
  renderError: NonNullable<Configuration['renderError']>;
  /** Access tokens' lifetime; ACCESS_TOKEN_SECONDS unless a test shortens it. */
  accessTokenSeconds?: number;
}

/** `<issuer>/mcp`: the resource (RFC 8707) of the tokens every registered client gets. */
export function mcpResource(issuer: string): string {
  return `${issuer}/mcp`;
}

/**
 * oidc-provider configured as the MCP authorization server (see ../shared/design/oauth-notes.md):
 * authorization code with PKCE (S256) only, public clients registered dynamically (native by
 * default, so that loopback redirects may use any port), tokens for the MCP resource (the
 * console's, configured here, for the REST API's), opaque and stored, rotating refresh tokens, revocation. Sign-in and consent are the API's own pages
 * (`/oauth/interaction/:uid`).
 */
export async function createAuthorizationServer(o: AuthorizationServerOptions): Promise<Provider> {
  const resource = mcpResource(o.issuer);
  const rest = restResource(o.issuer);
  const scope = MCP_SCOPES.join(' ');
  const accessTokenTTL = o.accessTokenSeconds ?? ACCESS_TOKEN_SECONDS;
  const errorRedirects = errorRedirectGuard(o.pool, o.renderError);
  const configuration: Configuration = {
    adapter: postgresAdapter(o.pool),
    findAccount: async (_ctx, id) => {
      const user = await findUser(o.pool, id);
      if (!user || user.status !== 'active') return undefined;
      return { accountId: user.id, claims: () => ({ sub: user.id, email: user.email }) };
    },
    jwks: { keys: [await oauthSigningJwk(o.signingSecret)] },
    cookies: { keys: o.cookieKeys, long: { httpOnly: true, sameSite: 'lax' }, short: { httpOnly: true, sameSite: 'lax' } },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      registration: '/oauth/register',
      revocation: '/oauth/revoke',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/logout',
      introspection: '/oauth/introspect',
      pushed_authorization_request: '/oauth/par',
      device_authorization: '/oauth/device',
      backchannel_authentication: '/oauth/backchannel',
      code_verification: '/oauth/device/verify',
      challenge: '/oauth/challenge',
    },
    // A grant is remembered per user and client until revoked, not per browser session: a web
    // client the user approved before gets its code right after sign-in. Native clients are still
    // shown the approval page each time (oidc-provider's native_client_prompt, RFC 8252 §8.6: any
    // program on the machine can claim a public native client's id and a loopback redirect).
    loadExistingGrant: async (ctx) => {
      const { oidc } = ctx;
      const clientId = oidc.client?.clientId;
      const accountId = oidc.session?.accountId;
      if (!clientId) return undefined;
      const grantId =
        oidc.result?.consent?.grantId ??
        oidc.session?.grantIdFor(clientId) ??
        (accountId ? await findUserClientGrantId(o.pool, accountId, clientId) : null);
      if (grantId) return oidc.provider.Grant.find(grantId);
      // The console is Intake's own: signing in is the approval (its grant is listed and revocable as any other).
      if (clientId === CONSOLE_CLIENT_ID && accountId) {
        const grant = new oidc.provider.Grant({ clientId, accountId });
        // Its scope is named among the server's scopes too (as the MCP scopes are), so the grant holds it both ways.
        grant.addOIDCScope(CONSOLE_SCOPE);
        grant.addResourceScope(rest, CONSOLE_SCOPE);
        await grant.save();
        return grant;
      }
      return undefined;
    },
    clients: [
      {
        client_id: CONSOLE_CLIENT_ID,
        client_name: CONSOLE_CLIENT_NAME,
        application_type: 'web',
        redirect_uris: [`${o.issuer}${CONSOLE_CALLBACK_PATH}`],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    renderError: errorRedirects.renderError,
    // oidc-provider's default, said here (which also silences its notice): a browser may call the
    // token and revocation endpoints cross-origin only from the origin of one of the client's own
    // redirect URIs (a web MCP client's page; the console is same-origin), never from "null".
    clientBasedCORS: (ctx, origin, client) =>
      origin !== 'null' &&
      (ctx.oidc.route === 'userinfo' || client.clientAuthMethod === 'none') &&
      (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    responseTypes: ['code'],
    scopes: ['openid', 'offline_access', ...MCP_SCOPES, CONSOLE_SCOPE],
    claims: { openid: ['sub'], email: ['email'] },
    // Registration is anonymous: every field a client registers has a length (and count) cap.
    extraClientMetadata: clientMetadataCaps,
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      id_token_signed_response_alg: 'ES256',
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // No logout endpoint: MCP clients do not use one, and its confirmation page and
      // post_logout_redirect_uri (any URI an anonymous registration names) made it a redirect
      // from this server to anywhere. A user's sessions end with `intake token revoke --user`.
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      revocation: { enabled: true },
      introspection: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => (client?.clientId === CONSOLE_CLIENT_ID ? rest : resource),
        useGrantedResource: () => true,
        // Each client gets tokens for its one resource: the console for the REST API, every other for /mcp.
        getResourceServerInfo: (_ctx, indicator, client) => {
          const console = client.clientId === CONSOLE_CLIENT_ID;
          const target = console ? rest : resource;
          if (indicator.replace(/\/$/, '') !== target)
            throw new errors.InvalidTarget(`tokens of this client are issued for ${target} only`);
          return console
            ? { scope: CONSOLE_SCOPE, audience: rest, accessTokenTTL, accessTokenFormat: 'opaque' }
            : { scope, audience: resource, accessTokenTTL, accessTokenFormat: 'opaque' };
        },
      },
    },
    // MCP clients do not ask for offline_access; they get a refresh token all the same, rotated on use.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: () => false,
    rotateRefreshToken: true,
    ttl: {
      AccessToken: accessTokenTTL,
      AuthorizationCode: 60,
      RefreshToken: 30 * 86_400,
      Grant: 30 * 86_400,
      Session: 14 * 86_400,
      Interaction: 3600,
    },
  };
  const provider = new Provider(o.issuer, configuration);
  errorRedirects.install(provider);
  provider.proxy = o.trustProxy ?? false;
  provider.maxIpsCount = o.trustProxyHops ?? 1;
  return provider;
}
