import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/paths.js';

const run = promisify(execFile);
const shared = globalThis as { __intakeProductionBuild?: Promise<void> };

/** `npm run build` (compiled JavaScript and the prebuilt workflow bundle), once per test run. */
export function productionBuild(): Promise<void> {
  shared.__intakeProductionBuild ??= run('npm', ['run', 'build'], { cwd: PROJECT_ROOT, maxBuffer: 1 << 26 }).then(() => undefined);
  return shared.__intakeProductionBuild;
}
