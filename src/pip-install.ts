import { execFile } from 'node:child_process';
import { rename, rm } from 'node:fs/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * `python -m pip install --target <target> <args>`, made whole before it is visible: pip writes a
 * directory of this process's own and it is renamed to `target` at the end, so that two processes
 * installing at once (test shards, a worker and a test) never see or leave a half-written target.
 * When another process's copy got there first, it is kept (it is as good) and this one is dropped.
 */
export async function pipInstallTarget(o: { python: string; target: string; args: readonly string[]; timeoutMs: number }): Promise<void> {
  const partial = `${o.target}.partial-${process.pid}-${Date.now()}`;
  try {
    await exec(o.python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...o.args, '--target', partial], {
      timeout: o.timeoutMs,
    });
    try {
      await rename(partial, o.target);
    } catch (error) {
      if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}
