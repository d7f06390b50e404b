import { pino } from 'pino';
import { buildApp, type AppDeps } from '../../../api/app.js';
import { createApiMetrics } from '../../../src/metrics/api-metrics.js';
import { testConfig } from '../../../harness/config.js';

type Middleware = (ctx: unknown, next: () => Promise<void>) => unknown;

export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json': { schema: unknown } } }> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

/** /openapi.json as the app serves it, built over stand-in dependencies (nothing is connected or called). */
export async function openApiDocument(): Promise<OpenApiDocument> {
  const deps = {
    config: testConfig({ UPLOAD_STORE: 's3', S3_BUCKET: 'openapi-test' }), // the file store would create directories
    pool: {},
    temporal: {},
    tokens: {},
    logger: pino({ level: 'silent' }),
    rateLimits: { limiter: () => null, close: async () => undefined },
    bodyChecker: null,
    metrics: createApiMetrics({ processMetrics: false }),
  } as unknown as AppDeps;
  const dispatch = buildApp(deps).middleware.find((m) => 'router' in m) as unknown as {
    router: { stack: { name: string; stack: Middleware[] }[] };
  };
  const layer = dispatch.router.stack.find((l) => l.name === 'openapi');
  if (!layer) throw new Error('no openapi route');
  const ctx = { state: {}, request: {}, query: {}, params: {}, body: undefined as unknown };
  for (const m of layer.stack) await m(ctx, async () => undefined);
  return ctx.body as OpenApiDocument;
}
