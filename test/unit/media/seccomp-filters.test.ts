import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { seccompFilter } from '../../../src/media/ffmpeg-sandbox.js';
import { PROJECT_ROOT } from '../../../src/paths.js';

const exec = promisify(execFile);
const GENERATE = path.join(PROJECT_ROOT, 'src', 'media', 'seccomp', 'generate.py');

/**
 * FFmpeg's seccomp filters and the worker container's profile (issue 50) are what their generator
 * makes with libseccomp (Debian's python3-seccomp, which .ci/run installs): nobody edits the
 * committed files by hand, and a change to the lists shows in both.
 */
describe('seccomp filters: the committed files are the generator’s', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-seccomp-'));
    await exec('/usr/bin/python3', [GENERATE, dir, path.join(dir, 'worker.json')]).catch((error: Error) => {
      throw new Error(`${error.message.split('\n')[0]} (install libseccomp's binding: apt-get install python3-seccomp)`);
    });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const arch of ['x86_64', 'aarch64'])
    it(`src/media/seccomp/ffmpeg-${arch}.bpf`, async () => {
      const committed = await readFile(path.join(PROJECT_ROOT, 'src', 'media', 'seccomp', `ffmpeg-${arch}.bpf`));
      assert.ok(committed.length > 0 && committed.length % 8 === 0, 'whole BPF instructions');
      assert.deepEqual(committed, await readFile(path.join(dir, `ffmpeg-${arch}.bpf`)));
    });

  it('deploy/seccomp/worker.json, the profile the compose file gives the worker', async () => {
    const committed = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'deploy', 'seccomp', 'worker.json'), 'utf8')) as unknown;
    assert.deepEqual(committed, JSON.parse(await readFile(path.join(dir, 'worker.json'), 'utf8')));
    const compose = parse(await readFile(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { security_opt?: string[] }>;
    };
    const options = compose.services.worker?.security_opt ?? [];
    assert.ok(options.includes('seccomp=./deploy/seccomp/worker.json'), JSON.stringify(options));
    assert.ok(!options.includes('seccomp=unconfined'));
  });

  it('this machine has a filter for FFmpeg', () => {
    assert.ok(seccompFilter('x64')?.endsWith('ffmpeg-x86_64.bpf'));
    assert.ok(seccompFilter('arm64')?.endsWith('ffmpeg-aarch64.bpf'));
    assert.equal(seccompFilter('s390x'), null);
  });
});
