import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { devServerSearchAttributeFlags } from '../temporal/search-attributes.js';
import { freePort, sleep } from './net.js';
import { StartupError } from './startup-error.js';

export interface LocalTemporal {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

export interface LocalTemporalOptions {
  cliPath: string;
  port: number;
  /** null: no Web UI (tests). */
  uiPort: number | null;
  namespace: string;
  /** SQLite file that keeps workflows across restarts; in memory when absent. */
  dbFile?: string;
  logFile: string;
  startTimeoutMs?: number;
  /** In a process group of its own (the dev stack): see LocalPostgresOptions.ownProcessGroup. */
  ownProcessGroup?: boolean;
}

/**
 * Starts `temporal server start-dev` as a child process and waits for it ourselves: the SDK's own
 * spawn gives the server only 5 s, too little on a loaded 2-core machine or with a persistent file.
 */
export async function startLocalTemporal(options: LocalTemporalOptions): Promise<LocalTemporal> {
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    ...devServerSearchAttributeFlags(),
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...(options.uiPort === null ? ['--headless'] : ['--ui-port', String(options.uiPort), '--ui-disable-news-fetch']),
  ];
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownProcessGroup ?? false });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const spawnFailure = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(
        new StartupError(
          `the Temporal CLI ${options.cliPath} could not be run (${error.message})`,
          'check the file, or set TEMPORAL_CLI_PATH to a working `temporal` binary',
        ),
      ),
    ),
  );
  spawnFailure.catch(() => undefined);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const address = `127.0.0.1:${options.port}`;
  try {
    await Promise.race([spawnFailure, waitReady(child, address, options.namespace, options.startTimeoutMs ?? 90_000, options.logFile)]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    address,
    uiUrl: options.uiPort === null ? null : `http://127.0.0.1:${options.uiPort}`,
    async stop() {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
      log.end();
    },
  };
}

async function waitReady(child: ChildProcess, address: string, namespace: string, timeoutMs: number, logFile: string): Promise<void> {
  const todo = `read ${logFile}; free the port or set TEMPORAL_PORT, or set TEMPORAL_ADDRESS to a Temporal server of your own`;
  const deadline = Date.now() + timeoutMs;
  const state: { exitCode: number | null } = { exitCode: null };
  child.once('exit', (code) => (state.exitCode = code ?? -1));
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (state.exitCode !== null) throw new StartupError(`the Temporal dev server exited with code ${state.exitCode} while starting`, todo);
    try {
      const connection = await Connection.connect({ address, connectTimeout: '2s' });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await sleep(250);
    }
  }
  throw new StartupError(
    `the Temporal dev server at ${address} was not ready within ${timeoutMs} ms (${String((lastError as Error)?.message ?? lastError).split('\n')[0]})`,
    todo,
  );
}

/**
 * A graceful stop, bounded: the dev server drains for a few seconds, longer while schedules and
 * workflows are busy; Ctrl-C must not wait for that. Its SQLite commits are atomic, so a kill after
 * the grace loses nothing it acknowledged.
 */
const STOP_GRACE_MS = 3_000;

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
