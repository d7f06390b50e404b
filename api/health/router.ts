import { checkDatabase, checkTemporal } from '../../src/health.js';
import type { AppDeps } from '../context.js';
import { buildOpenApi } from '../openapi.js';
import type { RouteRegistry } from '../routes.js';

const healthSchema = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } };
const readySchema = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: {
      type: 'object',
      properties: { database: { type: 'string', enum: ['ok', 'unavailable'] }, temporal: { type: 'string', enum: ['ok', 'unavailable'] } },
    },
  },
};

/** Liveness, readiness (PostgreSQL and Temporal reachable) and the OpenAPI document. */
export function healthRoutes(deps: AppDeps, registry: RouteRegistry): void {
  registry.add({
    method: 'get', path: '/healthz', operationId: 'health', summary: 'Liveness: 200 while the process runs', tags: ['operations'],
    responses: { 200: { description: 'Alive', schema: healthSchema } },
    handler: async (ctx) => {
      ctx.body = { status: 'ok' };
    },
  });
  registry.add({
    method: 'get', path: '/readyz', operationId: 'ready', summary: 'Readiness: 200 only while PostgreSQL and Temporal are reachable', tags: ['operations'],
    responses: { 200: { description: 'Ready', schema: readySchema }, 503: { description: 'A dependency is unreachable', schema: readySchema } },
    handler: async (ctx) => {
      const [database, temporal] = await Promise.all([checkDatabase(deps.pool), checkTemporal(deps.temporal.connection)]);
      const ready = database === 'ok' && temporal === 'ok';
      ctx.status = ready ? 200 : 503;
      ctx.body = ready
        ? { status: 'ready', checks: { database, temporal } }
        : { status: 'not_ready', message: 'A dependency is unavailable.', errorCode: 'not_ready', checks: { database, temporal } };
    },
  });
  registry.add({
    method: 'get', path: '/openapi.json', operationId: 'openapi', summary: 'This API as OpenAPI 3.1', tags: ['operations'],
    responses: { 200: { description: 'The OpenAPI document' } },
    handler: async (ctx) => {
      ctx.body = buildOpenApi(registry.specs, deps.config.http.publicBaseUrl);
    },
  });
}
