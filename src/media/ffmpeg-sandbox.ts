import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, open, readlink, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOnPath } from '../executables.js';

/**
 * FFmpeg decodes untrusted media: a decoder bug must find nothing to steal. Every FFmpeg process
 * gets an environment of its own (no secret of the worker's), and runs under bubblewrap: no network,
 * no IPC, a process namespace of its own (no `/proc` of the worker: its environment is not
 * readable), no capabilities, and a filesystem holding only the FFmpeg build and the system
 * libraries (read-only) and the one file it writes. The media comes as standard input. Inside, it
 * may create no user namespace (`--disable-userns`) and runs under a seccomp filter that refuses
 * the system calls FFmpeg never needs (namespaces, ptrace, mounts, kernel modules, BPF, keyrings...:
 * `seccomp/generate.py`, issue 50).
 *
 * `FFMPEG_SANDBOX`: `bwrap` requires the sandbox (media work stops with a message without it),
 * `none` runs FFmpeg without it, `auto` (development's default) uses it when it works here.
 */
export type FfmpegSandboxMode = 'bwrap' | 'none' | 'auto';

/**
 * `disableUserns`: bubblewrap's `--disable-userns` works here. In a container whose `/proc/sys` is
 * read-only (podman's and Docker's default) it cannot: the seccomp filter still refuses every way
 * to make a namespace, user namespaces included.
 */
export type FfmpegSandbox = { kind: 'bwrap'; bwrap: string; seccomp: string; disableUserns: boolean } | { kind: 'none'; reason: string };

/** The file descriptor bubblewrap reads the seccomp filter from: the child's fourth (stdio's 3). */
export const SECCOMP_FD = 3;

/** FFmpeg's seccomp filter for this machine's architecture (made by seccomp/generate.py), or null when there is none. */
export function seccompFilter(arch: string = process.arch): string | null {
  const name = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : null;
  if (!name) return null;
  const file = fileURLToPath(new URL(`./seccomp/ffmpeg-${name}.bpf`, import.meta.url));
  return existsSync(file) ? file : null;
}

/**
 * The whole environment of an FFmpeg process (and of bubblewrap): no secret of the worker's.
 * glibc reserves 64 MiB of address space per thread's arena: with x264's threads that alone would
 * spend the address-space limit. Two arenas keep the limit about memory actually used.
 */
export const FFMPEG_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: '/usr/bin:/bin', MALLOC_ARENA_MAX: '2' });

/** What the dynamic loader needs to find the system libraries (merged /usr or not). */
const LIBRARY_DIRS = ['/usr/lib', '/usr/lib64', '/usr/lib32', '/usr/local/lib', '/lib', '/lib64', '/lib32'];
const LOADER_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives'];

/** Library directories as mounts: a symlink (`/lib -> usr/lib`) stays a symlink. */
async function libraryMounts(): Promise<string[]> {
  const mounts: string[] = [];
  for (const dir of LIBRARY_DIRS) {
    const info = await lstat(dir).catch(() => null);
    if (info?.isSymbolicLink()) mounts.push('--symlink', await readlink(dir), dir);
    else if (info?.isDirectory()) mounts.push('--ro-bind', dir, dir);
  }
  for (const file of LOADER_FILES) mounts.push('--ro-bind-try', file, file);
  return mounts;
}

/** The directories of the binaries, and of what they link to (`/usr/bin/ffmpeg -> …`). */
async function binaryDirs(binaries: readonly string[]): Promise<string[]> {
  const dirs = new Set<string>();
  for (const binary of binaries) {
    dirs.add(path.dirname(path.resolve(binary)));
    dirs.add(path.dirname(await realpath(binary)));
  }
  return [...dirs];
}

/**
 * bubblewrap's arguments up to the command: the binaries' directories and the libraries
 * read-only, `outputFile` (which must exist) writable, nothing else of the host. The seccomp filter
 * is read from SECCOMP_FD: the caller opens `seccompFilter()` there (see `withSeccomp`).
 */
export async function bwrapArgs(o: {
  binaries: readonly string[];
  outputFile?: string | undefined;
  disableUserns?: boolean;
}): Promise<string[]> {
  const readOnly = (await binaryDirs(o.binaries)).flatMap((dir) => ['--ro-bind', dir, dir]);
  const output = o.outputFile ? ['--bind', path.resolve(o.outputFile), path.resolve(o.outputFile)] : [];
  return [
    '--unshare-all',
    // A user namespace of its own, in which no further one may be made.
    '--unshare-user',
    ...(o.disableUserns === false ? [] : ['--disable-userns']),
    '--seccomp',
    String(SECCOMP_FD),
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
    ...Object.entries(FFMPEG_ENV).flatMap(([name, value]) => ['--setenv', name, value]),
    '--dev',
    '/dev',
    ...(await libraryMounts()),
    ...readOnly,
    ...output,
    // The sandbox's own root (a tmpfs holding the mount points) is read-only too: nothing to fill.
    '--remount-ro',
    '/',
    '--chdir',
    '/',
  ];
}

/**
 * The sandbox FFmpeg runs in: bubblewrap when it is installed and runs `binaries[0] -version`
 * here (user namespaces may be turned off), else none when the mode allows it.
 */
export async function findSandbox(mode: FfmpegSandboxMode, binaries: readonly string[]): Promise<FfmpegSandbox> {
  if (mode === 'none') return { kind: 'none', reason: 'FFMPEG_SANDBOX=none' };
  const bwrap = await findOnPath('bwrap', ['/usr/bin', '/bin']);
  const seccomp = seccompFilter();
  let problem: string;
  if (!bwrap) {
    problem = 'bubblewrap (`bwrap`) is not installed';
  } else if (!seccomp) {
    problem = `there is no seccomp filter for this architecture (${process.arch})`;
  } else {
    problem = '';
    // With --disable-userns where it works; where /proc/sys is read-only (a container), without it.
    for (const disableUserns of [true, false]) {
      try {
        const args = [...(await bwrapArgs({ binaries, disableUserns })), '--', binaries[0]!, '-hide_banner', '-version'];
        await withSeccomp(seccomp, (fd) => probe(bwrap, args, fd));
        return { kind: 'bwrap', bwrap, seccomp, disableUserns };
      } catch (error) {
        problem ||= `bubblewrap (${bwrap}) cannot run FFmpeg here: ${(error as Error).message.split('\n')[0]}`;
      }
    }
  }
  return { kind: 'none', reason: problem };
}

/** Runs `use` with the seccomp filter open (its descriptor goes to the child as SECCOMP_FD), closing it after. */
export async function withSeccomp<T>(filter: string, use: (fd: number) => Promise<T>): Promise<T> {
  const handle = await open(filter, 'r');
  try {
    return await use(handle.fd);
  } finally {
    await handle.close();
  }
}

/** bubblewrap running `args` once, the filter at SECCOMP_FD: resolves when it exits 0, with its first line of stderr otherwise. */
function probe(bwrap: string, args: string[], seccompFd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe', seccompFd], env: FFMPEG_ENV, timeout: 30_000 });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(0, 2000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(stderr.trim() || `exit code ${code}`))));
  });
}

/** bubblewrap exits 128 + n when its command died of signal n: the signal, as Node names it. */
export function signalOfExit(code: number | null): NodeJS.Signals | null {
  if (code === null || code <= 128) return null;
  const entry = Object.entries(os.constants.signals).find(([, number]) => number === code - 128);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}
