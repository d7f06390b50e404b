import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp, type AppDeps } from '../../api/app.js';
import { ENV_VARIABLES } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import type { RateDecision } from '../../src/rate-limit.js';
import { testConfig } from '../../harness/config.js';
import { createApiMetrics } from '../../src/metrics/api-metrics.js';

type Middleware = (ctx: any, next: () => Promise<void>) => unknown;
interface Layer {
  name: string;
  stack: Middleware[];
}

/** Runs a route's middleware the way Koa composes it, on a stand-in context. */
async function run(stack: Middleware[], ctx: any): Promise<void> {
  const dispatch = async (i: number): Promise<void> => {
    await stack[i]?.(ctx, () => dispatch(i + 1));
  };
  await dispatch(0);
}

/** A stand-in context: request headers in, response headers and body out. */
function context(headers: Record<string, string> = {}) {
  const sent: Record<string, string> = {};
  return {
    sent,
    state: {},
    request: {},
    query: {},
    params: {},
    body: undefined as any,
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    set: (fields: Record<string, string>) => Object.assign(sent, fields),
  };
}

/**
 * The real app over stand-in dependencies (nothing listens, nothing is connected): its routes, as
 * registered in api/routes.ts. `keyRow` is what an API key lookup finds; the rate limiter always refuses.
 */
function stubbedApp() {
  const state = { keyRow: null as unknown, consumed: 0 };
  const refuse = async (): Promise<RateDecision> => {
    state.consumed++;
    return { allowed: false, limit: 100, remaining: 0, resetSeconds: 42 };
  };
  const deps = {
    config: testConfig({ UPLOAD_STORE: 's3', S3_BUCKET: 'readme-test' }), // the file store would create directories
    pool: { maybeOne: async () => state.keyRow },
    temporal: {},
    tokens: {},
    logger: pino({ level: 'silent' }),
    rateLimits: { limiter: () => ({ consume: refuse }), close: async () => undefined },
    bodyChecker: null,
    metrics: createApiMetrics({ processMetrics: false }),
  } as unknown as AppDeps;
  const dispatch = buildApp(deps).middleware.find((m) => 'router' in m) as unknown as { router: { stack: Layer[] } };
  const layer = (operationId: string) => {
    const found = dispatch.router.stack.find((l) => l.name === operationId);
    assert.ok(found, operationId);
    return found;
  };
  return { state, layer };
}

async function openApiDocument(app: ReturnType<typeof stubbedApp>): Promise<{ paths: Record<string, Record<string, unknown>> }> {
  const ctx = context();
  await run(app.layer('openapi').stack, ctx);
  return ctx.body;
}

/** The text under a `## ` heading, up to the next one. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, heading);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const METHOD = '(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)';

/** `GET|POST /v3/rest/x[?page&limit]` → `GET /v3/rest/x`, `POST /v3/rest/x`. */
function documentedRoutes(text: string): Set<string> {
  const pattern = new RegExp(`\`(${METHOD}(?:\\|${METHOD})*) (/[^\`\\s[?]*)`, 'g');
  return new Set([...text.matchAll(pattern)].flatMap((m) => m[1]!.split('|').map((method) => `${method} ${m[2]}`)));
}

describe('README', () => {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const app = stubbedApp();

  it('documents every environment variable the service reads (docs/configuration.md, linked from the README)', () => {
    const configuration = readFileSync(path.join(PROJECT_ROOT, 'docs', 'configuration.md'), 'utf8');
    assert.ok(readme.includes('(docs/configuration.md)'));
    const missing = ENV_VARIABLES.filter((name) => !configuration.includes(`\`${name}\``));
    assert.deepEqual(missing, []);
  });

  it('shows the two commands and the test command', () => {
    assert.ok(readme.includes('npm install') && readme.includes('npm start') && readme.includes('npm test'));
  });

  it('lists every route of the OpenAPI document in the HTTP API summary (docs/http-api.md, linked from the README), and no route that does not exist', async () => {
    const document = await openApiDocument(app);
    const routes = Object.entries(document.paths).flatMap(([p, operations]) =>
      Object.keys(operations).map((m) => `${m.toUpperCase()} ${p}`),
    );
    // The tus endpoint is a middleware of its own (api/recordings/uploads/tus.ts), not a route spec.
    const outsideOpenApi = ['HEAD', 'PATCH', 'OPTIONS'].map((m) => `${m} /v3/uploads/{uploadId}.{token}`);
    // So is the MCP authorization server (oidc-provider, api/oauth; test/integration/mcp/mcp-oauth.test.ts calls each).
    outsideOpenApi.push(
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/register',
      'GET /oauth/authorize',
      'POST /oauth/token',
      'POST /oauth/revoke',
    );
    // And the console's files (api/console/router.ts; test/unit/api/console-router.test.ts).
    outsideOpenApi.push('GET /console/{path}');
    assert.ok(readme.includes('(docs/http-api.md)'));
    const documented = documentedRoutes(section(readFileSync(path.join(PROJECT_ROOT, 'docs', 'http-api.md'), 'utf8'), 'Routes'));
    assert.deepEqual(
      routes.filter((r) => !documented.has(r)),
      [],
      'missing from the summary',
    );
    assert.deepEqual(
      [...documented].filter((r) => !routes.includes(r) && !outsideOpenApi.includes(r)),
      [],
      'not a route',
    );
  });

  it('states the number of operations /openapi.json describes', async () => {
    const document = await openApiDocument(app);
    const count = Object.values(document.paths).reduce((n, operations) => n + Object.keys(operations).length, 0);
    assert.equal(Number(/`\/openapi\.json`\s+describes (\d+) operations/.exec(readme)?.[1]), count);
  });

  it('feedback: only a key that passed authentication and the scope check gets RateLimit headers (a 401 or 403 none)', async () => {
    const key = {
      id: 'k',
      organization_id: 'o',
      name: null,
      display_prefix: 'ik_x',
      created_at: '',
      last_used_at: new Date().toISOString(),
      revoked_at: null,
    };
    const attempt = async (headers: Record<string, string>, keyRow: unknown) => {
      app.state.keyRow = keyRow;
      app.state.consumed = 0;
      const ctx = context(headers);
      const status = await run(app.layer('createFeedbackSource').stack, ctx).then(
        () => 0,
        (e: { status: number }) => e.status,
      );
      return { status, consumed: app.state.consumed, rateHeaders: Object.keys(ctx.sent).filter((h) => h.startsWith('RateLimit-')) };
    };
    assert.deepEqual(await attempt({}, null), { status: 401, consumed: 0, rateHeaders: [] });
    assert.deepEqual(await attempt({ 'x-service-api-key': 'ik_unknown' }, null), { status: 401, consumed: 0, rateHeaders: [] });
    assert.deepEqual(await attempt({ 'x-service-api-key': 'ik_read' }, { ...key, scopes: ['recordings:read'] }), {
      status: 403,
      consumed: 0,
      rateHeaders: [],
    });
    assert.deepEqual(await attempt({ 'x-service-api-key': 'ik_write' }, { ...key, scopes: ['feedback:write'] }), {
      status: 429,
      consumed: 1,
      rateHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    });
    assert.match(
      section(readFileSync(path.join(PROJECT_ROOT, 'docs', 'guides', 'first-requests.md'), 'utf8'), 'Feedback quick-start'),
      /A 401 \(no or bad key\) or 403 \(missing\s+scope\) carries none/,
    );
  });

  it('lists every workflow workflows/index.ts exports in the Architecture section (by its folder), the session drainer by name', () => {
    const index = readFileSync(path.join(PROJECT_ROOT, 'workflows', 'index.ts'), 'utf8');
    const exported = [...index.matchAll(/^export \{ (\w+Workflow) \} from '\.\/([\w-]+)\/workflow\.js';$/gm)];
    // Every export of the index is a workflow of this form, so none escapes the check.
    assert.equal(exported.length, (index.match(/^export /gm) ?? []).length);
    assert.ok(exported.length >= 8);
    const architecture = section(readme, 'Architecture');
    const listed = /^workflows\/ [^\n]*\n((?: {14}.*\n)*)/m.exec(architecture)?.[1] ?? '';
    const missing = exported.filter(([, , folder]) => !new RegExp(`(^|[\\s,])${folder}\\b(?!-)`).test(listed)).map(([, name]) => name);
    assert.deepEqual(missing, []);
    assert.match(listed, /the session drainer/);
  });

  it('names the Node package the project installs, whose install script allowScripts lets run', () => {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
    assert.ok(readme.includes(`\`node@${pkg.devDependencies.node}\``));
    assert.equal(pkg.allowScripts.node, true);
  });
});
