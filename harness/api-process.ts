import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from '../src/dev/net.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { httpStatus, waitFor } from './wait.js';

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * The production entrypoint (`src/main/api.ts`) as a process of its own on a free port of
 * 127.0.0.1, with `env` (its logs go nowhere, its errors to this process's stderr); resolves once
 * /readyz answers 200. `execArgv`: Node options before the entrypoint (a CPU profile, say).
 */
export async function startApiProcess(env: Record<string, string>, o: { execArgv?: string[] } = {}): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(o.execArgv ?? []), '--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', 'api.ts')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', METRICS_PORT: 'off', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  if (!(await waitFor(async () => (await httpStatus(`${url}/readyz`)) === 200, 60_000))) {
    child.kill('SIGKILL');
    throw new Error('the API process did not become ready');
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
