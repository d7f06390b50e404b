import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths.js';

const exec = promisify(execFile);

export interface ReleaseTree {
  /** The release's full commit. */
  commit: string;
  /** Its files (`git archive`) with its own `npm ci`. */
  dir: string;
  /** The Node its dependencies install (`node_modules/node`), else this process's. */
  node: string;
}

/**
 * An earlier release's code, ready to run: `git archive` of `ref` with `npm ci` from its own lockfile,
 * kept in `~/.cache/intake/releases/<commit>` (outside the clone, built once; about a minute).
 */
export async function releaseTree(ref: string): Promise<ReleaseTree> {
  const commit = await resolveCommit(ref);
  const dir = path.join(os.homedir(), '.cache', 'intake', 'releases', commit);
  const marker = path.join(dir, '.installed');
  if (!existsSync(marker) || (await readFile(marker, 'utf8')) !== commit) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await exec('sh', ['-c', 'git -C "$1" archive "$2" | tar -x -C "$3"', 'sh', PROJECT_ROOT, commit, dir]);
    await exec('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 900_000 });
    await writeFile(marker, commit);
  }
  const own = path.join(dir, 'node_modules', 'node', 'bin', 'node');
  return { commit, dir, node: existsSync(own) ? own : process.execPath };
}

/** The release's CLI (`src/cli/main.ts` on its own Node) with `env`: `args`' JSON answer. */
export async function releaseCli(release: ReleaseTree, env: Record<string, string>, ...args: string[]): Promise<Record<string, any>> {
  const { stdout } = await exec(release.node, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: release.dir, env });
  return JSON.parse(stdout) as Record<string, any>;
}

/** `ref`'s full commit; a shallow clone (a CI's may be one) first fetches the history it lacks. */
async function resolveCommit(ref: string): Promise<string> {
  const revParse = async () =>
    (await exec('git', ['-C', PROJECT_ROOT, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout.trim();
  try {
    return await revParse();
  } catch (error) {
    const shallow = (await exec('git', ['-C', PROJECT_ROOT, 'rev-parse', '--is-shallow-repository'])).stdout.trim() === 'true';
    if (!shallow) throw error;
    await exec('git', ['-C', PROJECT_ROOT, 'fetch', '--quiet', '--unshallow'], { timeout: 600_000 });
    return revParse();
  }
}
