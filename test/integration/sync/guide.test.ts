import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { agentContext, sessionRequest, userMessage, type AgentContext } from '../../../harness/agents.js';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { insertSignal } from './helpers.js';

const run = promisify(execFile);

/** The shell block after `<!-- guide: name -->` in the incremental sync guide. */
function block(name: string): string {
  const text = readFileSync(path.join(PROJECT_ROOT, 'docs', 'guides', 'incremental-sync.md'), 'utf8');
  const at = text.indexOf(`<!-- guide: ${name} -->`);
  assert.ok(at >= 0, `no block ${name}`);
  const sh = /```sh\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(sh);
  return sh[1]!;
}

/** The guide's loop runs as written (bash, curl, jq) against the API: every signal once, then a bookmark that resumes. */
describe('incremental sync guide: the curl loop runs as written', function () {
  this.timeout(60_000);
  let t: AgentContext;
  let dir: string;
  before(async () => {
    t = await agentContext();
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-sync-guide-'));
  });
  after(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('follows nextCursor to the end (pages of 2 here), keeps the bookmark, and resumes with nothing new', async () => {
    const app = await t.newApp();
    const res = await t.ingest(app, sessionRequest(app, [userMessage(1, 'hi')], { externalSessionId: 'guide' }));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await insertSignal(t.pool, t.org.organizationId, res.body.sessionId, `s${i}`));
    const local = (sh: string) => sh.replaceAll('limit=100', 'limit=2');
    const env = { ...process.env, KEY: t.org.apiKey, INTAKE_URL: t.api.url };
    const follow = await run('bash', ['-euo', 'pipefail', '-c', local(block('sync-follow'))], { cwd: dir, env });
    const lines = follow.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { id: string }).id),
      ids,
    );
    const resume = await run('bash', ['-euo', 'pipefail', '-c', local(block('sync-resume'))], { cwd: dir, env });
    const page = JSON.parse(resume.stdout) as Record<string, unknown>;
    assert.deepEqual([page.signals, page.has_more, typeof page.nextCursor], [[], false, 'string']);
  });
});
