import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveFromRoot } from '../paths.js';

/**
 * What the running dev stack (`npm start`) tells other local processes: the `intake` CLI finds the
 * database here when DATABASE_URL is unset. Written with mode 0600: it holds the dev signing secret.
 */
export interface StackInfo {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  apiUrl: string;
  signingSecret: string;
  pid: number;
}

export function stackFilePath(dataDir: string): string {
  return path.join(resolveFromRoot(dataDir), 'stack.json');
}

export async function writeStackInfo(dataDir: string, info: StackInfo): Promise<void> {
  const file = stackFilePath(dataDir);
  await mkdir(path.dirname(file), { recursive: true });
  // Written whole, then renamed: a CLI never reads half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  await rename(partial, file);
}

export async function readStackInfo(dataDir: string): Promise<StackInfo | null> {
  const file = stackFilePath(dataDir);
  if (!existsSync(file)) return null;
  return JSON.parse(await readFile(file, 'utf8')) as StackInfo;
}

export async function removeStackInfo(dataDir: string): Promise<void> {
  await rm(stackFilePath(dataDir), { force: true });
}

/** The dev stack's signing secret: made once, kept under .data/ so tokens survive restarts. */
export async function devSigningSecret(dataDir: string): Promise<string> {
  const file = path.join(resolveFromRoot(dataDir), 'signing-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(path.dirname(file), { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return secret;
}
