import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Next } from 'koa';
import { authenticateToken } from '../../src/auth/credentials.js';
import { AppError } from '../../src/errors.js';
import { createMcpServer } from '../../src/mcp/tools.js';
import { publicBaseUrl } from '../base-url.js';
import type { AppContext, AppDeps } from '../context.js';
import { ERROR_REF } from '../openapi.js';
import { principalOf } from '../middleware/auth.js';
import { rateLimit } from '../middleware/rate-limit.js';
import type { RouteRegistry } from '../routes.js';

const METADATA_PATH = '/.well-known/oauth-protected-resource';


/**
 * MCP authorization (protected resource, RFC 9728): a 401 names the resource metadata so a client
 * can find the authorization server; `error="invalid_token"` when a token was sent but is not good.
 */
function unauthorized(deps: AppDeps, ctx: AppContext, message: string, invalidToken: boolean): AppError {
  const metadata = `${publicBaseUrl(deps, ctx)}${METADATA_PATH}/mcp`;
  const challenge = invalidToken
    ? `Bearer error="invalid_token", error_description="${message}", resource_metadata="${metadata}"`
    : `Bearer resource_metadata="${metadata}"`;
  return new AppError(401, invalidToken ? 'invalid_credentials' : 'unauthenticated', message, {}, { 'WWW-Authenticate': challenge });
}

/** Only user access tokens: the tools act for a user who approves them. API keys and agent secrets are refused. */
function mcpAuth(deps: AppDeps) {
  return async (ctx: AppContext, next: Next) => {
    if (ctx.get('x-service-api-key') || ctx.get('x-service-agent-key')) {
      throw unauthorized(deps, ctx, 'The MCP server takes a user access token (Authorization: Bearer); API keys and agent secrets are not accepted.', true);
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!match?.[1]) throw unauthorized(deps, ctx, 'Authentication required: send a user access token as Authorization: Bearer <token>.', false);
    const principal = await authenticateToken(deps.pool, deps.tokens, match[1]);
    if (typeof principal === 'string') throw unauthorized(deps, ctx, `The access token is ${principal === 'expired' ? 'expired' : principal === 'revoked' ? 'revoked' : 'not valid'}.`, true);
    ctx.state.principal = principal;
    await next();
  };
}

/** Stateless Streamable HTTP: a server and transport per request, bound to the authenticated user. */
async function handleMcp(deps: AppDeps, ctx: AppContext): Promise<void> {
  const principal = principalOf(ctx);
  if (principal.kind !== 'user') throw new Error('MCP requires a user principal');
  const server = createMcpServer(deps.pool, { organizationId: principal.organizationId, userId: principal.userId }, { log: ctx.state.log, requestId: ctx.state.requestId });
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
    const base = publicBaseUrl(deps, ctx);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = {
      resource: `${base}/mcp`,
      authorization_servers: deps.config.mcp.authorizationServers ?? [base],
      bearer_methods_supported: ['header'],
      resource_name: 'Intake MCP server (coding-agent session tools)',
      resource_documentation: `${base}/openapi.json`,
    };
  };
  const metadataResponse = { 200: { description: 'OAuth 2.0 protected resource metadata (RFC 9728)', schema: { type: 'object', required: ['resource', 'authorization_servers'] } } };
  registry.add({ method: 'get', path: METADATA_PATH, operationId: 'mcpProtectedResource', tags: ['mcp'], summary: 'Protected resource metadata of the MCP server', responses: metadataResponse, handler: metadata });
  registry.add({ method: 'get', path: `${METADATA_PATH}/mcp`, operationId: 'mcpProtectedResourceForPath', tags: ['mcp'], summary: 'Protected resource metadata of /mcp (path-suffixed form)', responses: metadataResponse, handler: metadata });
  registry.add({
    method: 'post', path: '/mcp', operationId: 'mcp', tags: ['mcp'],
    summary: 'MCP Streamable HTTP endpoint (JSON-RPC); user access tokens only',
    middleware: [mcpAuth(deps), ...(limiter ? [rateLimit(limiter)] : [])], security: [{ bearer: [] }],
    body: { schema: { anyOf: [{ type: 'object' }, { type: 'array', minItems: 1 }] }, limitBytes: deps.config.mcp.bodyLimitBytes },
    responses: {
      200: { description: 'JSON-RPC response' },
      202: { description: 'Notification accepted' },
      401: { description: 'No user access token, a bad one, or an API key or agent secret; WWW-Authenticate names the resource metadata', schema: ERROR_REF },
      406: { description: 'Accept must include application/json and text/event-stream (JSON-RPC error body)' },
      429: { description: 'Over MCP_RATE_LIMIT_PER_MINUTE requests a minute for this user; see Retry-After', schema: ERROR_REF },
    },
    handler: (ctx) => handleMcp(deps, ctx),
  });
}
