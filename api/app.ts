import Koa from 'koa';
import { AppError } from '../src/errors.js';
import type { AppContext, AppDeps, AppState } from './context.js';
import { agentApplicationRoutes } from './agent-applications/router.js';
import { agentConversationRoutes } from './agent-conversations/router.js';
import { otlpRoutes } from './otel/router.js';
import { agentIngestPath } from './agent-conversations/auth.js';
import { feedbackRoutes } from './feedback/router.js';
import { recordingCatalogRoutes } from './recordings/catalog/router.js';
import { recordingRoutes } from './recordings/router.js';
import { healthRoutes } from './health/router.js';
import { managementRoutes } from './management/router.js';
import { mcpRoutes } from './mcp/router.js';
import { operatorRoutes } from './operator/router.js';
import { mediaRoutes } from './recordings/media/router.js';
import { meetingJoinRoutes } from './recordings/meeting-joins/router.js';
import { signalRoutes } from './signals/router.js';
import { uploadRoutes } from './recordings/uploads/router.js';
import { webhookEndpointRoutes } from './webhook-endpoints/router.js';
import { apiKeyRoutes } from './api-keys/router.js';
import { meRoutes } from './me/router.js';
import { tusEndpoint } from './recordings/uploads/tus.js';
import { createUploadStore } from '../src/media/upload-store.js';
import { errorHandler } from './middleware/errors.js';
import { requestId } from './middleware/request-id.js';
import { httpMetrics } from './middleware/metrics.js';
import { httpTracing } from './middleware/tracing.js';
import { currentTracing } from '../src/telemetry/tracing.js';
import { RouteRegistry } from './routes.js';
import { oauthRoutes } from './oauth/mount.js';
import { consoleRoutes } from './console/router.js';
import { CONSOLE_BUILD_DIR } from '../src/paths.js';
import { publicBaseUrl } from './base-url.js';
import { webhookDeliveryRoutes } from './webhooks/deliveries.js';

export type { AppDeps };

/** The Koa app, not listening: the entrypoint listens, tests use a port of their own. */
export function buildApp(deps: AppDeps): Koa<AppState> {
  // X-Forwarded-* are believed only when an operator says a proxy sets them (TRUST_PROXY). ctx.ip is
  // then the X-Forwarded-For entry TRUST_PROXY_HOPS from the right (what the outermost proxy saw):
  // entries further left are the client's own and would let it pick its address (every limit keyed on it).
  const { trustProxy, trustProxyHops } = deps.config.http;
  const app = new Koa<AppState>({ proxy: trustProxy, maxIpsCount: trustProxyHops });
  const registry = new RouteRegistry(deps);
  healthRoutes(deps, registry);
  managementRoutes(deps, registry);
  apiKeyRoutes(deps, registry);
  meRoutes(deps, registry);
  operatorRoutes(deps, registry);
  feedbackRoutes(deps, registry);
  agentApplicationRoutes(deps, registry);
  const agentIngest = agentIngestPath(deps);
  agentConversationRoutes(deps, registry, agentIngest);
  otlpRoutes(deps, registry, agentIngest);
  webhookEndpointRoutes(deps, registry);
  signalRoutes(deps, registry);
  meetingJoinRoutes(deps, registry);
  recordingRoutes(deps, registry);
  recordingCatalogRoutes(deps, registry);
  const uploads = createUploadStore(deps.config.media);
  uploadRoutes(deps, registry, uploads);
  mediaRoutes(deps, registry);
  mcpRoutes(deps, registry);
  webhookDeliveryRoutes(deps, registry);

  if (currentTracing().enabled) app.use(httpTracing());
  app.use(requestId(deps.logger));
  app.use(httpMetrics(deps.metrics));
  app.use(errorHandler());
  app.use(async (ctx: AppContext, next) => {
    await next();
    // A handler that wrote the raw response itself (the MCP transport) leaves Koa out of it.
    if (ctx.body != null || ctx.respond === false) return;
    // Nothing answered: allowedMethods set 405 (or 501 for a method the router does not know, such as
    // TRACE; still a method this resource does not allow, so 405) with an Allow header, or no route matched.
    if (ctx.status === 405 || ctx.status === 501) {
      throw new AppError('method_not_allowed', { message: `${ctx.method} is not allowed on this resource.` });
    }
    if (ctx.status === 404) throw new AppError('route_not_found', { message: `No route for ${ctx.method} ${ctx.path}.` });
  });
  if (deps.oauth) {
    // oidc-provider sets its cookies through this app's context too: the same keys (oauth-notes, pitfall 9).
    app.keys = deps.oauth.cookieKeys;
    app.use(oauthRoutes(deps.oauth, deps.pool, (ctx) => publicBaseUrl(deps, ctx)));
  }
  app.use(consoleRoutes(CONSOLE_BUILD_DIR));
  app.use(tusEndpoint(deps, uploads));
  app.use(registry.router.routes());
  app.use(registry.router.allowedMethods());
  // Errors outside a request (socket errors) are logged, never printed with internals.
  app.on('error', (error: unknown) => deps.logger.debug({ err: error }, 'koa error'));
  return app;
}
