import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Next } from 'koa';
import { authenticateOAuthToken, authenticateToken } from '../../src/auth/credentials.js';
import { MCP_SCOPES } from '../../src/oauth/provider.js';
import { TOOL_SCOPES } from '../../src/oauth/server.js';
import { AppError } from '../../src/errors.js';
import { createMcpServer } from '../../src/mcp/tools.js';
import { publicBaseUrl } from '../base-url.js';
import type { AppContext, AppDeps } from '../context.js';
import { ERROR_REF } from '../openapi.js';
import { principalOf } from '../middleware/auth.js';
import { rateLimit } from '../middleware/rate-limit.js';
import type { RouteRegistry } from '../routes.js';

const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The MCP resource's URL and its authorization servers: the built-in one's issuer when there is one. */
function resourceOf(deps: AppDeps, ctx: AppContext): { resource: string; base: string; authorizationServers: string[] } {
  // The built-in authorization server's issuer is this same base URL (see OAuthServers).
  const base = publicBaseUrl(deps, ctx);
  return { base, resource: `${base}/mcp`, authorizationServers: deps.config.mcp.authorizationServers ?? [base] };
}

/** The protected-resource metadata's URL, which 401 and 403 challenges name. */
function metadataUrl(deps: AppDeps, ctx: AppContext): string {
  return `${resourceOf(deps, ctx).base}${METADATA_PATH}/mcp`;
}

/**
 * MCP authorization (protected resource, RFC 9728): a 401 names the resource metadata and the
 * scopes so a client can find the authorization server; `error="invalid_token"` when a token was
 * sent but is not good. A 403 `insufficient_scope` names the scope a tool call needs.
 */
function unauthorized(deps: AppDeps, ctx: AppContext, message: string, invalidToken: boolean): AppError {
  const metadata = metadataUrl(deps, ctx);
  const scope = deps.oauth ? `, scope="${MCP_SCOPES.join(' ')}"` : '';
  const challenge = invalidToken
    ? `Bearer error="invalid_token", error_description="${message}", resource_metadata="${metadata}"${scope}`
    : `Bearer resource_metadata="${metadata}"${scope}`;
  return new AppError(invalidToken ? 'invalid_credentials' : 'unauthenticated', { message, headers: { 'WWW-Authenticate': challenge } });
}

/**
 * OAuth access tokens of the built-in authorization server: a user approved the client and its
 * scopes (the contract's "OAuth user context and explicit approval"); they work here and nowhere
 * else. The CLI's user access tokens only with MCP_ACCEPT_CLI_TOKENS, a development switch. API
 * keys and agent secrets are refused.
 */
function mcpAuth(deps: AppDeps) {
  return async (ctx: AppContext, next: Next) => {
    if (ctx.get('x-service-api-key') || ctx.get('x-service-agent-key')) {
      throw unauthorized(
        deps,
        ctx,
        'The MCP server takes a user access token (Authorization: Bearer); API keys and agent secrets are not accepted.',
        true,
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match?.[1])
      throw unauthorized(deps, ctx, 'Authentication required: send a user access token as Authorization: Bearer <token>.', false);
    if (deps.oauth?.isAccessToken(match[1])) {
      const result = await authenticateOAuthToken(deps.pool, await deps.oauth.forBase(publicBaseUrl(deps, ctx)), match[1]);
      if (typeof result === 'string')
        throw unauthorized(deps, ctx, 'The access token is not valid (expired, revoked, or for another resource).', true);
      ctx.state.principal = result.principal;
      ctx.state.oauth = result.access;
      await next();
      return;
    }
    if (!deps.config.mcp.acceptCliTokens) {
      throw unauthorized(
        deps,
        ctx,
        'The MCP server takes access tokens of its OAuth authorization server only: connect through OAuth (your client does this from the 401).',
        true,
      );
    }
    const principal = await authenticateToken(deps.pool, deps.tokens, match[1]);
    if (typeof principal === 'string')
      throw unauthorized(
        deps,
        ctx,
        `The access token is ${principal === 'expired' ? 'expired' : principal === 'revoked' ? 'revoked' : 'not valid'}.`,
        true,
      );
    ctx.state.principal = principal;
    await next();
  };
}

/** With an OAuth token, each tool call needs its scope (TOOL_SCOPES); the CLI's tokens carry the user's role. */
function requireToolScopes(deps: AppDeps) {
  return async (ctx: AppContext, next: Next) => {
    const access = ctx.state.oauth;
    if (access) {
      const body: unknown = ctx.request.body;
      for (const message of Array.isArray(body) ? body : [body]) {
        const m = message as { method?: unknown; params?: { name?: unknown } } | null;
        if (m?.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
        const needed = TOOL_SCOPES[m.params.name];
        if (needed && !access.scopes.includes(needed)) {
          throw new AppError('insufficient_scope', {
            message: `The tool ${m.params.name} needs the scope ${needed}, which this token was not granted.`,
            headers: {
              'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed}", resource_metadata="${metadataUrl(deps, ctx)}"`,
            },
          });
        }
      }
    }
    await next();
  };
}

/** Stateless Streamable HTTP: a server and transport per request, bound to the authenticated user. */
async function handleMcp(deps: AppDeps, ctx: AppContext): Promise<void> {
  const principal = principalOf(ctx);
  if (principal.kind !== 'user') throw new Error('MCP requires a user principal');
  const threads = deps.bodyChecker;
  const server = createMcpServer(
    deps.pool,
    { organizationId: principal.organizationId, userId: principal.userId },
    {
      log: ctx.state.log,
      requestId: ctx.state.requestId,
      readSession: threads ? (task) => threads.readSession(task) : undefined,
    },
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  ctx.respond = false;
  ctx.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
}

export function mcpRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const limiter = deps.rateLimits.limiter('mcp', deps.config.mcp.ratePerMinute);
  const metadata = async (ctx: AppContext) => {
    const { base, resource, authorizationServers } = resourceOf(deps, ctx);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = {
      resource,
      authorization_servers: authorizationServers,
      ...(deps.oauth ? { scopes_supported: [...MCP_SCOPES] } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'Intake MCP server (coding-agent session tools)',
      resource_documentation: `${base}/openapi.json`,
    };
  };
  const metadataResponse = {
    200: {
      description: 'OAuth 2.0 protected resource metadata (RFC 9728)',
      schema: { type: 'object', required: ['resource', 'authorization_servers'] },
    },
  };
  registry.add({
    method: 'get',
    path: METADATA_PATH,
    operationId: 'mcpProtectedResource',
    tags: ['mcp'],
    summary: 'Protected resource metadata of the MCP server',
    responses: metadataResponse,
    handler: metadata,
  });
  registry.add({
    method: 'get',
    path: `${METADATA_PATH}/mcp`,
    operationId: 'mcpProtectedResourceForPath',
    tags: ['mcp'],
    summary: 'Protected resource metadata of /mcp (path-suffixed form)',
    responses: metadataResponse,
    handler: metadata,
  });
  registry.add({
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    tags: ['mcp'],
    summary: 'MCP Streamable HTTP endpoint (JSON-RPC); OAuth access tokens of the built-in authorization server',
    middleware: [mcpAuth(deps), ...(limiter ? [rateLimit(limiter)] : [])],
    afterBody: [requireToolScopes(deps)],
    security: [{ bearer: [] }],
    body: { schema: { anyOf: [{ type: 'object' }, { type: 'array', minItems: 1 }] }, limitBytes: deps.config.mcp.bodyLimitBytes },
    responses: {
      200: { description: 'JSON-RPC response' },
      202: { description: 'Notification accepted' },
      401: {
        description:
          'No OAuth access token, a bad one, a CLI access token (unless MCP_ACCEPT_CLI_TOKENS in development), or an API key or agent secret; WWW-Authenticate names the resource metadata',
        schema: ERROR_REF,
      },
      403: {
        description: 'insufficient_scope: an OAuth token without the scope a tool call needs; WWW-Authenticate names it',
        schema: ERROR_REF,
      },
      406: { description: 'Accept must include application/json and text/event-stream (JSON-RPC error body)' },
      429: { description: 'Over MCP_RATE_LIMIT_PER_MINUTE requests a minute for this user; see Retry-After', schema: ERROR_REF },
    },
    errors: ['unauthenticated', 'invalid_credentials', 'insufficient_scope'],
    handler: (ctx) => handleMcp(deps, ctx),
  });
}
