import { checkDatabase, checkTemporal } from '../../src/health.js';
import { ERROR_CATALOGUE, type ErrorKey } from '../../src/errors.js';
import { packageVersion } from '../../src/paths.js';
import type { AppDeps } from '../context.js';
import { buildOpenApi } from '../openapi.js';
import type { RouteRegistry } from '../routes.js';

const healthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'version'],
  properties: { status: { type: 'string', enum: ['ok'] }, version: { type: 'string', description: 'The running release (package.json)' } },
};
const readySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'degraded', 'not_ready', 'starting'] },
    message: { type: 'string' },
    errorCode: { type: 'string', enum: ['not_ready', 'starting'] },
    checks: {
      type: 'object',
      additionalProperties: false,
      properties: { database: { type: 'string', enum: ['ok', 'unavailable'] }, temporal: { type: 'string', enum: ['ok', 'unavailable'] } },
    },
  },
};

/**
 * Liveness, readiness and the OpenAPI document. Readiness is what this replica can serve: without
 * PostgreSQL nothing (503), without Temporal most of the API still (reads, feedback, agent ingest:
 * 200 `degraded`, with Temporal's state in `checks`), so that a load balancer does not drain every
 * replica during a Temporal outage; routes that need Temporal answer 503 `temporal_unavailable`.
 */
export function healthRoutes(deps: AppDeps, registry: RouteRegistry): void {
  registry.add({
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness: 200 while the process runs, with the running version',
    tags: ['operations'],
    responses: { 200: { description: 'Alive', schema: healthSchema } },
    handler: async (ctx) => {
      ctx.body = { status: 'ok', version: packageVersion() };
    },
  });
  registry.add({
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: 200 while PostgreSQL is reachable (status degraded while Temporal is not), else 503',
    tags: ['operations'],
    responses: {
      200: { description: 'Ready, or degraded: Temporal unreachable (checks.temporal)', schema: readySchema },
      503: { description: 'PostgreSQL is unreachable (not_ready), or the stack is still starting (starting)', schema: readySchema },
    },
    errors: ['not_ready', 'starting'],
    handler: async (ctx) => {
      if (deps.startup && !deps.startup.open) {
        ctx.status = 503;
        ctx.set('Retry-After', '1');
        ctx.body = { status: 'starting', message: ERROR_CATALOGUE.starting.message, errorCode: 'starting' satisfies ErrorKey, checks: {} };
        return;
      }
      const [database, temporal] = await Promise.all([checkDatabase(deps.pool), checkTemporal(deps.temporal)]);
      const checks = { database, temporal };
      if (database !== 'ok') {
        ctx.status = 503;
        ctx.body = { status: 'not_ready', message: ERROR_CATALOGUE.not_ready.message, errorCode: 'not_ready' satisfies ErrorKey, checks };
        return;
      }
      ctx.body = { status: temporal === 'ok' ? 'ready' : 'degraded', checks };
    },
  });
  registry.add({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This API as OpenAPI 3.1',
    tags: ['operations'],
    responses: { 200: { description: 'The OpenAPI document' } },
    handler: async (ctx) => {
      ctx.body = buildOpenApi(registry.specs, deps.config.http.publicBaseUrl);
    },
  });
}
