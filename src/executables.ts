import { access, constants } from 'node:fs/promises';
import path from 'node:path';

/** Whether `file` exists and this process may run it. */
export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `name` on PATH that this process may run, then in `fallbackDirs`; null when none. */
export async function findOnPath(name: string, fallbackDirs: readonly string[] = []): Promise<string | null> {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), ...fallbackDirs]) {
    if (dir && (await isExecutable(path.join(dir, name)))) return path.join(dir, name);
  }
  return null;
}
