import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../../src/config.js';
import { DEFAULT_FFMPEG_SETTINGS, FfmpegTools, type RunResult } from '../../../src/media/ffmpeg-tools.js';
import { bwrapArgs, FFMPEG_ENV, withSeccomp } from '../../../src/media/ffmpeg-sandbox.js';
import { findOnPath } from '../../../src/executables.js';
import { CPU_BOUND_ENCODE } from '../../../harness/media.js';

/** The processes below `pid`, by their parent links in /proc. */
async function descendants(pid: number): Promise<{ pid: number; comm: string }[]> {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    // pid (comm) state ppid …: comm may hold spaces and parentheses, the last ')' ends it.
    const match = text ? /^(\d+) \((.*)\) \S+ (\d+)/s.exec(text) : null;
    if (match) {
      parents.set(Number(match[1]), Number(match[3]));
      names.set(Number(match[1]), match[2]!);
    }
  }
  const isBelow = (p: number): boolean => {
    for (let up = parents.get(p); up !== undefined && up > 1; up = parents.get(up)) if (up === pid) return true;
    return false;
  };
  return [...parents.keys()].filter(isBelow).map((p) => ({ pid: p, comm: names.get(p)! }));
}

/** Standard output as text (the bytes a data copy printed). */
const printed = (result: RunResult) => result.stdout;

/** FFmpeg as a compromised decoder would use it: any path, any protocol, no guarded input. */
const copyToStdout = (input: string) => [
  '-nostdin',
  '-v',
  'error',
  '-f',
  'data',
  '-i',
  input,
  '-map',
  '0',
  '-c',
  'copy',
  '-f',
  'data',
  '-',
];

describe('FFmpeg has no secret of the worker and sees nothing but its own files (bubblewrap)', function () {
  this.timeout(120_000);
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const sandboxed = new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, sandbox: 'bwrap' });
  const limits = { wallSeconds: 60, cpuSeconds: 60 };
  let dir: string;
  const saved = { SIGNING_SECRET: process.env.SIGNING_SECRET, OPERATOR_TOKEN: process.env.OPERATOR_TOKEN };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-sandbox-'));
    // The worker's secrets, as its environment holds them.
    process.env.SIGNING_SECRET = `${canary}-signing-secret-of-the-worker`;
    process.env.OPERATOR_TOKEN = `${canary}-operator-token`;
  });
  after(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(dir, { recursive: true, force: true });
  });

  for (const sandbox of ['bwrap', 'none'] as const) {
    it(`every process of an FFmpeg run has an environment without the worker's variables (FFMPEG_SANDBOX=${sandbox})`, async () => {
      const tools = new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, sandbox });
      const controller = new AbortController();
      // Real time for a minute: the run is there to be looked at, then cancelled.
      const running = tools.run('ffmpeg', ['-nostdin', '-v', 'error', '-re', '-f', 'lavfi', '-i', 'sine=duration=60', '-f', 'null', '-'], {
        limits,
        signal: controller.signal,
      });
      running.catch(() => undefined);
      // Read while it runs; a process caught in the middle of its exec shows an empty environment for a moment.
      const environOf = async (pid: number) => (await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')).split('\0').filter(Boolean);
      let processes: { pid: number; comm: string }[] = [];
      // Until the whole chain is seen: a snapshot taken between bubblewrap's forks can miss one.
      const seen = () => processes.some((p) => p.comm === 'ffmpeg') && (sandbox !== 'bwrap' || processes.some((p) => p.comm === 'bwrap'));
      // The ffmpeg whose environment could be read, kept from that read: a second read could land in the
      // exec moment again (CI saw an empty one), and a process seen in one snapshot may be gone (CI saw
      // an environment that stayed empty for 5 s): every snapshot is looked at afresh.
      let ffmpeg: { pid: number; comm: string } | undefined;
      let ffmpegEnv: string[] = [];
      for (let tries = 0; tries < 400 && !ffmpeg; tries++) {
        processes = await descendants(process.pid);
        if (seen()) {
          for (const p of processes.filter((q) => q.comm === 'ffmpeg')) {
            const env = await environOf(p.pid);
            if (env.length) [ffmpeg, ffmpegEnv] = [p, env];
            if (ffmpeg) break;
          }
        }
        if (!ffmpeg) await sleep(25);
      }
      assert.ok(ffmpeg, `ffmpeg runs below the worker with an environment: ${JSON.stringify(processes)}`);
      if (sandbox === 'bwrap')
        assert.ok(
          processes.some((p) => p.comm === 'bwrap'),
          'under bubblewrap',
        );
      const environments = await Promise.all(
        processes.map(async (p) => ({ ...p, env: p.pid === ffmpeg.pid ? ffmpegEnv : await environOf(p.pid) })),
      );
      controller.abort();
      await assert.rejects(running, { name: 'AbortError' });
      for (const p of environments) assert.ok(!p.env.join('\n').includes(canary), `${p.comm} (${p.pid}) holds a secret of the worker`);
      // Its own two variables (and the shell's PWD), nothing else.
      const names = environments.find((p) => p.pid === ffmpeg.pid)!.env.map((v) => v.split('=')[0]!);
      assert.deepEqual(names.filter((n) => n !== 'PWD').sort(), ['MALLOC_ARENA_MAX', 'PATH'], names.join(' '));
    });
  }

  it('runs under a seccomp filter (Seccomp: 2) and can make no namespace of its own, user namespaces included (issue 50)', async () => {
    const { sandbox } = await sandboxed.binaries();
    assert.ok(sandbox.kind === 'bwrap', JSON.stringify(sandbox));
    // The same bubblewrap arguments and filter as FFmpeg's, around a shell that reports and tries.
    const tools = ['/bin/sh', (await findOnPath('unshare', ['/usr/bin']))!, '/usr/bin/python3'];
    const script = [
      'unshare -U true 2>/dev/null && echo user-namespace-made || echo user-namespace-refused',
      'unshare -n true 2>/dev/null && echo net-namespace-made || echo net-namespace-refused',
      'unshare -m true 2>/dev/null && echo mount-namespace-made || echo mount-namespace-refused',
      // Socket families FFmpeg never opens (Debian's python3 is in the sandbox's /usr/bin).
      `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)' 2>/dev/null && echo netlink-opened || echo netlink-refused`,
      `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)' 2>/dev/null && echo alg-opened || echo alg-refused`,
      `/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)' 2>/dev/null && echo unix-opened || echo unix-refused`,
    ].join('; ');
    // With --disable-userns, and without it (a container's read-only /proc/sys): the filter alone refuses them too.
    for (const disableUserns of [true, false]) {
      const args = [...(await bwrapArgs({ binaries: tools, disableUserns })), '--', '/bin/sh', '-c', script];
      const out = await withSeccomp(
        sandbox.seccomp,
        (fd) =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(sandbox.bwrap, args, { stdio: ['ignore', 'pipe', 'pipe', fd], env: FFMPEG_ENV });
            let text = '';
            child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            child.on('error', reject);
            child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${text}`))));
          }),
      );
      for (const ns of ['user', 'net', 'mount']) assert.match(out, new RegExp(`^${ns}-namespace-refused$`, 'm'), out);
      for (const family of ['netlink', 'alg']) assert.match(out, new RegExp(`^${family}-refused$`, 'm'), out);
      assert.match(out, /^unix-opened$/m, 'what is not refused still works');
    }

    // And FFmpeg itself, as the worker runs it (the sandbox has no /proc: its status is read from outside).
    const controller = new AbortController();
    const running = sandboxed.run(
      'ffmpeg',
      ['-nostdin', '-v', 'error', '-re', '-f', 'lavfi', '-i', 'sine=duration=60', '-f', 'null', '-'],
      {
        limits,
        signal: controller.signal,
      },
    );
    running.catch(() => undefined);
    // This run's FFmpeg: the one in a process namespace of its own (NSpid names it twice); an earlier test's may linger.
    let status = '';
    for (let tries = 0; tries < 400 && !status; tries++) {
      for (const p of (await descendants(process.pid)).filter((q) => q.comm === 'ffmpeg')) {
        const text = await readFile(`/proc/${p.pid}/status`, 'utf8').catch(() => '');
        if (/^NSpid:\s+\d+\s+\d+/m.test(text)) status = text;
      }
      if (!status) await sleep(25);
    }
    controller.abort();
    await assert.rejects(running, { name: 'AbortError' });
    assert.match(status, /^Seccomp:\s+2$/m, status);
    assert.match(status, /^NoNewPrivs:\s+1$/m, status);
  });

  it("cannot read a file of the host or the worker's /proc environment", async () => {
    const secret = path.join(dir, 'other-recording.txt');
    await writeFile(secret, `${canary}-another-tenant's-media`);
    for (const file of [secret, `/proc/${process.pid}/environ`, '/etc/hostname']) {
      const result = await sandboxed.run('ffmpeg', copyToStdout(file), { limits });
      assert.notEqual(result.code, 0, file);
      assert.ok(!printed(result).includes(canary), file);
      assert.match(result.stderr, /No such file or directory/, file);
    }
  });

  it('reaches no network, loopback included', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections += 1;
      socket.end(`${canary}-from-the-network`);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as net.AddressInfo;
      const result = await sandboxed.run('ffmpeg', copyToStdout(`tcp://127.0.0.1:${port}`), { limits });
      assert.notEqual(result.code, 0);
      assert.ok(!printed(result).includes(canary));
      assert.match(result.stderr, /Connection refused|Network is unreachable/);
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  it('writes its declared output file and nothing else', async () => {
    const declared = path.join(dir, 'declared.wav');
    const elsewhere = path.join(dir, 'elsewhere.wav');
    const tone = (out: string) => ['-nostdin', '-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', '-y', out];
    const refused = await sandboxed.run('ffmpeg', tone(elsewhere), { outputFile: declared, limits });
    assert.notEqual(refused.code, 0);
    await assert.rejects(stat(elsewhere), { code: 'ENOENT' });
    await assert.rejects(stat(declared), { code: 'ENOENT' }, 'a failed run leaves no empty output behind');
    const written = await sandboxed.run('ffmpeg', tone(declared), { outputFile: declared, limits });
    assert.equal(written.code, 0, written.stderr);
    assert.ok((await stat(declared)).size > 16_000);
  });

  it('is what runs: the binaries report the sandbox, and the limits still apply inside it', async () => {
    assert.equal((await sandboxed.binaries()).sandbox.kind, 'bwrap');
    const result = await sandboxed.run('ffmpeg', CPU_BOUND_ENCODE, { limits: { wallSeconds: 120, cpuSeconds: 1 } });
    assert.equal(result.limit, 'cpu');
  });

  it('FFMPEG_SANDBOX: production requires bubblewrap; development uses it when it works; none is asked for', () => {
    assert.equal(
      loadConfig({ NODE_ENV: 'production', SIGNING_SECRET: 'x'.repeat(32), PUBLIC_BASE_URL: 'https://intake.example' }).media.ffmpeg
        .sandbox,
      'bwrap',
    );
    assert.equal(loadConfig({}).media.ffmpeg.sandbox, 'auto');
    assert.equal(loadConfig({ FFMPEG_SANDBOX: 'none' }).media.ffmpeg.sandbox, 'none');
    assert.throws(() => loadConfig({ FFMPEG_SANDBOX: 'firejail' }), /FFMPEG_SANDBOX/);
  });
});
