import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/paths.js';

const run = promisify(execFile);
const CLI = path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts');
/**
 * `node --import tsx` in this Node, not tsx's own command: that one runs the script in a second
 * Node process it starts (for its watch mode), which doubles every run's start.
 */
export const TS_NODE: readonly string[] = ['--import', 'tsx'];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** The admin CLI as operators run it: a separate process, JSON on stdout, errors on stderr. */
export async function runIntake(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...TS_NODE, CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    return { code: 0, stdout, stderr, json: JSON.parse(stdout) };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, json: null };
  }
}

/** The CLI with `input` on its standard input (`--password-stdin`). */
export async function runIntakeWithInput(env: Record<string, string>, input: string, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [...TS_NODE, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  const [code] = (await once(child, 'close')) as [number];
  let json: unknown = null;
  try {
    json = code === 0 ? JSON.parse(stdout) : null;
  } catch {
    json = null;
  }
  return { code, stdout, stderr, json };
}
