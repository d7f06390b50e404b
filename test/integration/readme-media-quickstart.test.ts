import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DatabasePool } from 'slonik';
import { createDatabasePool } from '../../src/db/pool.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { startTestApi, type TestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createTestOrg, type TestOrg } from '../../harness/fixtures.js';
import { createTestDatabase } from '../../harness/stack.js';
import { startTestWorker, type TestWorker } from '../../harness/worker.js';

const run = promisify(execFile);

const GUIDE = path.join('docs', 'guides', 'recordings.md');

/** The shell block that follows `marker` in the recordings guide. */
function guideBlock(marker: string): string {
  const readme = readFileSync(path.join(PROJECT_ROOT, GUIDE), 'utf8');
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `${GUIDE} has no ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `no sh block after ${marker}`);
  return block[1]!;
}

/**
 * The offline media quick-start of docs/guides/recordings.md, run as written (curl and jq in bash) against the real
 * stack: no media server and no internet, the bundled sample goes up as a direct upload and the
 * recording's asset ends `completed` with a playback URL.
 */
describe('recordings guide: offline media quick-start', function () {
  this.timeout(120_000);
  let mediaDir: string;
  let workDir: string;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;

  before(async () => {
    mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-readme-media-'));
    // The reader's directory: the repository's sample is there, and the file the block writes stays there.
    workDir = await mkdtemp(path.join(os.tmpdir(), 'intake-readme-media-work-'));
    await symlink(path.join(PROJECT_ROOT, 'samples'), path.join(workDir, 'samples'));
    pool = await createDatabasePool(await createTestDatabase());
    worker = await startTestWorker(pool, { deps: { mediaDir } });
    api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
    org = await createTestOrg(pool);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await rm(mediaDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  it('uploads the bundled sample with curl and ends with a completed, playable asset', async () => {
    const script = guideBlock('<!-- offline media quick-start -->');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? '', KEY: org.apiKey, INTAKE_URL: api.url },
      timeout: 90_000,
    });
    // The asset as the guide prints it, then the status of its ranged read of the playback URL.
    const [assetLine, ranged] = stdout.trim().split('\n').slice(-2);
    assert.equal(ranged, '206', stdout);
    const asset = JSON.parse(assetLine ?? '');
    assert.equal(asset.status, 'completed', stdout);
    assert.equal(asset.errorCode, null);
    const playback = await fetch(asset.url, { headers: { Range: 'bytes=0-1023' } });
    assert.equal(playback.status, 206);
    assert.ok((await playback.arrayBuffer()).byteLength > 0);
  });
});
