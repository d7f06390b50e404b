import { execFile } from 'node:child_process';
import { lstat, readlink, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findOnPath } from '../executables.js';

const exec = promisify(execFile);

/**
 * FFmpeg decodes untrusted media: a decoder bug must find nothing to steal. Every FFmpeg process
 * gets an environment of its own (no secret of the worker's), and runs under bubblewrap: no network,
 * no IPC, a process namespace of its own (no `/proc` of the worker: its environment is not
 * readable), no capabilities, and a filesystem holding only the FFmpeg build and the system
 * libraries (read-only) and the one file it writes. The media comes as standard input.
 *
 * `FFMPEG_SANDBOX`: `bwrap` requires the sandbox (media work stops with a message without it),
 * `none` runs FFmpeg without it, `auto` (development's default) uses it when it works here.
 */
export type FfmpegSandboxMode = 'bwrap' | 'none' | 'auto';

export type FfmpegSandbox = { kind: 'bwrap'; bwrap: string } | { kind: 'none'; reason: string };

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
 * read-only, `outputFile` (which must exist) writable, nothing else of the host.
 */
export async function bwrapArgs(o: { binaries: readonly string[]; outputFile?: string | undefined }): Promise<string[]> {
  const readOnly = (await binaryDirs(o.binaries)).flatMap((dir) => ['--ro-bind', dir, dir]);
  const output = o.outputFile ? ['--bind', path.resolve(o.outputFile), path.resolve(o.outputFile)] : [];
  return [
    '--unshare-all',
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
  let problem: string;
  if (!bwrap) {
    problem = 'bubblewrap (`bwrap`) is not installed';
  } else {
    try {
      await exec(bwrap, [...(await bwrapArgs({ binaries })), '--', binaries[0]!, '-hide_banner', '-version'], {
        env: FFMPEG_ENV,
        timeout: 30_000,
      });
      return { kind: 'bwrap', bwrap };
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      problem = `bubblewrap (${bwrap}) cannot run FFmpeg here: ${(e.stderr?.trim() || e.message).split('\n')[0]}`;
    }
  }
  return { kind: 'none', reason: problem };
}

/** bubblewrap exits 128 + n when its command died of signal n: the signal, as Node names it. */
export function signalOfExit(code: number | null): NodeJS.Signals | null {
  if (code === null || code <= 128) return null;
  const entry = Object.entries(os.constants.signals).find(([, number]) => number === code - 128);
  return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}
