/**
 * `npm run test:fuzz`: a bounded schemathesis run against the real stack (PostgreSQL, Temporal, a
 * worker, the API), every operation of /openapi.json, a fixed seed. Fails on any 5xx and on any
 * response whose body does not match the schema it declares. Installs schemathesis into .tools/ on
 * first use (PyPI). FUZZ_MAX_EXAMPLES (default 20 per operation) and FUZZ_MAX_SECONDS (default 120
 * for the organization API key's run, a quarter of it for each narrower credential) bound it. One
 * worker: with two threads, hypothesis' lambda descriptions (ast parsing in threads) now and then
 * fail inside CPython with "AST constructor recursion depth mismatch" (cpython gh-106905), a
 * schemathesis runtime error that says nothing of the API. The coverage phase is left out: in
 * schemathesis 4.32.5 it stopped with that same error.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Runtime } from '@temporalio/worker';
import { createApplication, issueCredential } from '../../src/agents/applications.js';
import { createDatabasePool } from '../../src/db/pool.js';
import { createLogger } from '../../src/logger.js';
import { sdkLogger } from '../../src/temporal/sdk-logger.js';
import { startTestApi } from '../../harness/app.js';
import { TEST_OPERATOR_TOKEN, testConfig } from '../../harness/config.js';
import { createSignInUser, mcpAccessToken } from '../../harness/oauth-browser.js';
import { createTestOrg, createTestUser } from '../../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../../harness/stack.js';
import { ensurePipTool } from '../../harness/tools.js';
import { loopbackMediaDeps, startTestWorker } from '../../harness/worker.js';

const VERSION = '4.32.5';

/**
 * Schemathesis closes each run with pytest's banner (`==== 2 warnings in 120.03s ====`), which CI
 * reads as pytest ending on no test executed; its banner lines are printed as `--- <title>` instead.
 */
function unbanner(line: string): string {
  const banner = /^=+ (.+?) =+$/.exec(line);
  return banner ? `--- ${banner[1]}` : line;
}

function st(dir: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [path.join(dir, 'bin', 'st'), ...args], {
      env: { ...process.env, PYTHONPATH: dir, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => process.stdout.write(`${unbanner(line)}\n`));
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? 1));
  });
}

Runtime.install({ shutdownSignals: [], logger: sdkLogger(createLogger('error', 'intake-fuzz')) });
const stDir = await ensurePipTool('schemathesis', VERSION, path.join('bin', 'st'));
const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-fuzz-'));
const pool = await createDatabasePool(await createTestDatabase());
const worker = await startTestWorker(pool, { deps: loopbackMediaDeps(dir) });
const api = await startTestApi({
  pool,
  config: testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue, FEEDBACK_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'silent' }),
});
let failed = 0;
try {
  const org = await createTestOrg(pool, { credits: 1000 });
  const user = await createTestUser(pool, org.organizationId, 'admin', 3600);
  const app = await createApplication(pool, { organizationId: org.organizationId, name: 'Fuzzed', agentKey: 'fuzzed' });
  const { secret } = await issueCredential(pool, app);
  const common = [
    `${api.url}/openapi.json`,
    '--checks',
    'not_a_server_error,response_schema_conformance',
    '--seed',
    '20261124',
    '--max-examples',
    process.env.FUZZ_MAX_EXAMPLES ?? '20',
    '--workers',
    '1',
    '--phases',
    'examples,fuzzing,stateful',
    '--request-timeout',
    '30',
    '--no-shrink',
  ];
  const maxSeconds = Number(process.env.FUZZ_MAX_SECONDS ?? '120');
  // Each credential on the operations that take it, with its share of FUZZ_MAX_SECONDS: the API key
  // has 63 operations; the others one to three, which a quarter of the time still gives hundreds of
  // examples each (measured with the whole budget: 966 to 6,911 for one to three operations).
  const narrow = ['--max-time', String(Math.max(10, Math.round(maxSeconds / 4)))];
  const runs: [string, string[]][] = [
    [
      'organization API key (and the operator token)',
      [
        '-H',
        `X-Service-Api-Key: ${org.apiKey}`,
        '-H',
        `X-Operator-Token: ${TEST_OPERATOR_TOKEN}`,
        '--exclude-path-regex',
        '^/(mcp|v3/rest/agent-conversations/ingest|otel/|v3/rest/recordings/meeting-joins)',
        '--max-time',
        String(maxSeconds),
      ],
    ],
    [
      'agent ingest secret',
      ['-H', `X-Service-Agent-Key: ${secret}`, '--include-path-regex', '^/(v3/rest/agent-conversations/ingest|otel/v1/traces)$', ...narrow],
    ],
    [
      'user access token',
      [
        '-H',
        `Authorization: Bearer ${user.accessToken}`,
        '--include-path-regex',
        '^/(v3/rest/recordings/meeting-joins|\\.well-known)',
        ...narrow,
      ],
    ],
    // /mcp takes only the authorization server's tokens: one a user approved, as an MCP client gets it.
    [
      'OAuth access token',
      ['-H', `Authorization: Bearer ${await mcpAccessToken(api.url, await createSignInUser(pool))}`, '--include-path', '/mcp', ...narrow],
    ],
  ];
  for (const [name, args] of runs) {
    process.stdout.write(`--- schemathesis with the ${name}\n`);
    const code = await st(stDir, ['run', ...common, ...args]);
    if (code !== 0) failed += 1;
  }
} finally {
  await api.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
