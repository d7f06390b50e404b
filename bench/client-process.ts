import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/paths.js';
import type { Summary } from './stats.js';

const run = promisify(execFile);

/**
 * A benchmark's HTTP client (`bench/<script>`) run in a process of its own, as an integrator's is,
 * given its phase as JSON: the Summary it prints.
 */
export async function clientProcess(script: string, spec: unknown): Promise<Summary> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'bench', script), JSON.stringify(spec)], {
    cwd: PROJECT_ROOT,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as Summary;
}
