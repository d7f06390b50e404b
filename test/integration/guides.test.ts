import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../src/db/pool.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { startTestApi, type TestApi } from '../../harness/app.js';
import { TEST_SIGNING_SECRET } from '../../harness/config.js';
import { createTestDatabase, testStack } from '../../harness/stack.js';

const run = promisify(execFile);

/** The shell block after `<!-- guide: name -->` in a guide. */
function guideBlock(guide: string, name: string): string {
  const file = path.join(PROJECT_ROOT, 'docs', 'guides', guide);
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(`<!-- guide: ${name} -->`);
  assert.ok(at >= 0, `${file} has no block '${name}'`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, `no sh block after '${name}'`);
  return block[1]!;
}

/** The JSON objects printed one after another (curl adds no newline after a body). */
function jsonValues(text: string): Record<string, unknown>[] {
  const values: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
  }
  return values;
}

/**
 * The guides' first steps run as a newcomer runs them, in one shell (bash, curl, jq, `npm run -s
 * intake`), against the real stack: no placeholder to fill in, ids carried by the shell, and the
 * agent guide's first ingest is not billing_blocked (issue 29.15).
 */
describe('guides: the first steps run as written', function () {
  this.timeout(180_000);
  let pool: DatabasePool;
  let api: TestApi;
  let databaseUrl: string;
  let dataDir: string;

  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = await createDatabasePool(databaseUrl);
    api = await startTestApi({ pool });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-guides-'));
  });
  after(async () => {
    await api?.close();
    await pool?.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The guides' blocks run in one bash as a newcomer runs them, against this stack; answers stdout. */
  const runBlocks = async (blocks: string[], env: Record<string, string> = {}) => {
    const script = blocks.join('\n').replaceAll('localhost:8080', new URL(api.url).host);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: PROJECT_ROOT,
      timeout: 150_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? os.tmpdir(),
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        SIGNING_SECRET: TEST_SIGNING_SECRET,
        LOG_LEVEL: 'silent',
        ...env,
      },
    });
    return stdout;
  };

  it('first requests, feedback and agent conversations', async () => {
    const { temporal } = await testStack();
    const stdout = await runBlocks(
      [
        guideBlock('first-requests.md', 'first requests'),
        guideBlock('first-requests.md', 'feedback'),
        guideBlock('agent-conversations.md', 'agent conversations'),
      ],
      { TEMPORAL_ADDRESS: temporal.address },
    );
    const lines = jsonValues(stdout);
    const records = lines.filter((l) => l.external_id === 'ticket-4711');
    assert.ok(records.length >= 1, `no feedback record in:\n${stdout}`);
    const people = lines.find((l) => Array.isArray(l.people)) as { people: { email: string }[] } | undefined;
    assert.equal(people?.people[0]?.email, 'ada@example.com');
    const ingest = lines.at(-1)!;
    assert.deepEqual([ingest.acceptedEventCount, ingest.processingStatus], [3, 'pending'], stdout);
  });

  it('webhook endpoints: create, list, read, update, rotate, delete', async () => {
    const stdout = await runBlocks([guideBlock('first-requests.md', 'first requests'), guideBlock('webhooks.md', 'webhook endpoints')]);
    const lines = jsonValues(stdout);
    const created = lines.find((l) => typeof l.secret === 'string' && l.description === 'CRM sync')!;
    assert.match(created.secret as string, /^whsec_/, stdout);
    const listed = lines.find((l) => Array.isArray(l.endpoints)) as { endpoints: { id: string }[] } | undefined;
    assert.deepEqual(
      listed?.endpoints.map((e) => e.id),
      [created.id],
    );
    const disabled = lines.find((l) => l.disabledReason === 'disabled by a user');
    assert.deepEqual([disabled?.eventTypes, disabled?.enabled], [null, false], stdout);
    const rotated = lines.at(-1)!;
    assert.ok(typeof rotated.secret === 'string' && rotated.secret !== created.secret && rotated.previousSecretExpiresAt, stdout);
    assert.ok(stdout.trimEnd().endsWith('204'), stdout);
  });

  it('data lifecycle: API keys over REST, deletes', async () => {
    const stdout = await runBlocks([
      guideBlock('first-requests.md', 'first requests'),
      guideBlock('data-lifecycle.md', 'api keys and deletes'),
    ]);
    const lines = jsonValues(stdout);
    const listed = lines.find((l) => Array.isArray(l.apiKeys)) as
      | { apiKeys: { name: string | null; lastUsedAt: string | null }[] }
      | undefined;
    const crm = listed?.apiKeys.find((k) => k.name === 'CRM sync');
    assert.ok(crm?.lastUsedAt, stdout);
    // The three deletes' statuses (the list's body ends without a newline, so the first follows it).
    assert.match(stdout, /204\n204\n204\n$/);
  });
});
