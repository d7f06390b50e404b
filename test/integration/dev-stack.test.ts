import { strict as assert } from 'node:assert';
import { TS_NODE } from '../helpers/cli.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, isPortOpen } from '../../src/dev/net.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { buildConsole } from '../../console/build.js';
import { deadline, httpStatus, waitFor } from '../../harness/wait.js';

const run = promisify(execFile);

/**
 * `npm start` as a user runs it (src/main/dev.ts on free ports, data in a fresh DATA_DIR): embedded
 * PostgreSQL, the Temporal dev server with its UI, worker and API; Ctrl-C stops every child; data
 * survives a restart.
 */
describe('dev stack (npm start)', function () {
  this.timeout(240_000);
  let env: Record<string, string>;
  let ports: { api: number; temporal: number; ui: number; pg: number };
  let stack: ChildProcess | undefined;
  let output = '';

  async function start(): Promise<void> {
    output = '';
    // Its own process group, like a terminal's foreground job: Ctrl-C signals every process in it.
    stack = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', 'dev.ts')], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    stack.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    stack.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const ready = await waitFor(async () => (await httpStatus(`http://127.0.0.1:${ports.api}/readyz`)) === 200, 90_000);
    assert.ok(ready, `the stack did not become ready within 90 s:\n${output.slice(-3000)}`);
    // Ready means usable: what the CLI reads is there the moment /readyz first answers 200.
    assert.ok(existsSync(path.join(env.DATA_DIR!, 'stack.json')), 'ready before .data/stack.json was written');
    // The banner follows at once.
    assert.ok(await waitFor(async () => output.includes('Intake is running'), 30_000), `no banner:\n${output.slice(-3000)}`);
  }

  async function interrupt(): Promise<number | null> {
    const child = stack!;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(-child.pid!, 'SIGINT'); // Ctrl-C: the whole process group
    return exited;
  }

  before(async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-dev-'));
    await chmod(dataDir, 0o755); // PostgreSQL runs as the postgres user when we are root
    ports = { api: await freePort(), temporal: await freePort(), ui: await freePort(), pg: await freePort() };
    env = {
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      DEV_POSTGRES_PORT: String(ports.pg),
      LOG_LEVEL: 'warn',
    };
  });
  after(async () => {
    if (stack && stack.exitCode === null) {
      const stopped = await Promise.race([interrupt().then(() => true), deadline(15_000, false)]);
      if (!stopped) process.kill(-stack.pid!, 'SIGKILL');
    }
  });

  it('starts everything, prints the banner, serves the API, the console and the Temporal UI', async () => {
    // What `npm start` does first (its prestart): the console built when missing or stale.
    await buildConsole({ ifStale: true });
    await start();
    assert.match(output, new RegExp(`API +http://127\\.0\\.0\\.1:${ports.api}`));
    assert.match(output, new RegExp(`Console +http://127\\.0\\.0\\.1:${ports.api}/console`));
    const console = await fetch(`http://127.0.0.1:${ports.api}/console/`);
    assert.equal(console.status, 200);
    assert.match(await console.text(), /<title>Intake console<\/title>/);
    assert.match(output, new RegExp(`Temporal UI +http://127\\.0\\.0\\.1:${ports.ui}`));
    assert.match(output, /npm run -s intake -- org create --name Acme/);
    assert.equal(await httpStatus(`http://127.0.0.1:${ports.ui}/`), 200);
    const stackFile = JSON.parse(await readFile(path.join(env.DATA_DIR!, 'stack.json'), 'utf8'));
    assert.equal(stackFile.apiUrl, `http://127.0.0.1:${ports.api}`);
  });

  it('lets the CLI find its database and the API accept the key it creates', async () => {
    const cli = path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts');
    const exec = async (...args: string[]) =>
      JSON.parse((await run(process.execPath, [...TS_NODE, cli, ...args], { env: { PATH: process.env.PATH ?? '', ...env } })).stdout);
    // The banner's hint, run as printed by a shell in the checkout: stdout is exactly one JSON object
    // (what `| jq` needs; without npm's -s its own banner would come first).
    const hint = /Create an organization: +(\S.*)$/m.exec(output)?.[1];
    assert.ok(hint?.startsWith('npm run -s intake -- '), hint);
    const hinted = await run('sh', ['-c', hint!], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? os.homedir(), ...env },
    });
    assert.equal(JSON.parse(hinted.stdout).name, 'Acme');
    const org = await exec('org', 'create', '--name', 'Acme');
    const key = await exec('api-key', 'create', '--org', org.organizationId);
    env.TEST_API_KEY = key.apiKey;
    const res = await fetch(`http://127.0.0.1:${ports.api}/v3/rest/organization`, { headers: { 'X-Service-Api-Key': key.apiKey } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { name: string }).name, 'Acme');
    // `npm run -s temporal -- …`: the Temporal CLI aimed at this stack (not whatever listens on 7233).
    const temporalCli = path.join(PROJECT_ROOT, 'src', 'cli', 'temporal.ts');
    const described = await run(process.execPath, [...TS_NODE, temporalCli, 'operator', 'namespace', 'describe', '--output', 'json'], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    assert.equal(JSON.parse(described.stdout).namespaceInfo.name, 'default');
    // The running stack's recorder, as its worker reports it, whatever this shell's environment says.
    const providers = JSON.parse(
      (
        await run(process.execPath, [...TS_NODE, cli, 'meeting-providers'], {
          env: { PATH: process.env.PATH ?? '', ...env, RECORDER: 'recall', RECALL_BASE_URL: 'https://recall.example', RECALL_API_KEY: 'k' },
        })
      ).stdout,
    );
    assert.deepEqual([providers.source, providers.recorder.kind], ['worker', 'local']);
    const doctor = await exec('doctor');
    assert.equal(doctor.ok, true);
    // The worker's FFmpeg: one build, the pinned FFmpeg 8 unless FFMPEG_PATH says otherwise.
    const { ffmpeg } = doctor.worker as { ffmpeg: { version: string; ffmpeg: string; ffprobe: string } };
    assert.match(ffmpeg.version, /^ffmpeg version n8\./);
    assert.match(ffmpeg.ffprobe, /ffprobe$/);
  });

  it('stops every child process on Ctrl-C (SIGINT to the whole process group) within 8 s, quietly', async () => {
    const before = output.length;
    const code = await Promise.race([interrupt(), deadline(8_000, 'still running after 8 s')]);
    assert.equal(code, 0, output.slice(-3000));
    // A clean stop is no failure: no warning, no error, no stack trace (LOG_LEVEL=warn here).
    const said = output.slice(before);
    assert.doesNotMatch(said, /"level":(?:40|50|60)|^ +at /m, said.slice(0, 3000));
    for (const port of [ports.api, ports.temporal, ports.ui, ports.pg]) {
      assert.ok(await waitFor(async () => !(await isPortOpen(port)), 15_000), `port ${port} still open after Ctrl-C`);
    }
  });

  it('keeps data across a restart', async () => {
    await start();
    const res = await fetch(`http://127.0.0.1:${ports.api}/v3/rest/organization`, { headers: { 'X-Service-Api-Key': env.TEST_API_KEY! } });
    assert.equal(res.status, 200);
    assert.equal(await Promise.race([interrupt(), deadline(8_000, 'still running after 8 s')]), 0, output.slice(-3000));
  });
});
