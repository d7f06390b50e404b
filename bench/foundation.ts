/**
 * The foundation's figures.
 * - cold start: `npm start` with an empty DATA_DIR (initdb, Temporal's SQLite schema, migrations,
 *   bundling) until /readyz answers 200 and the banner is printed; then Ctrl-C (process group SIGINT)
 *   until every process has exited;
 * - warm start: the same again on the existing data;
 * - `npm test`: wall time of the whole suite (type check, lint, unit, integration, replay).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, isPortOpen } from '../src/dev/net.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { httpStatus, waitFor } from '../harness/wait.js';

interface StartFigures {
  readyMs: number;
  bannerMs: number;
  stopMs: number;
}

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  // 100 ms polls: the start-up figures are read off these waits
  if (!(await waitFor(probe, timeoutMs, 100))) throw new Error('timed out');
}

async function measureStart(env: Record<string, string>, ports: number[]): Promise<StartFigures> {
  const started = performance.now();
  let output = '';
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await until(async () => (await httpStatus(`http://127.0.0.1:${env.PORT}/readyz`)) === 200, 120_000);
    const readyMs = performance.now() - started;
    await until(async () => output.includes('Intake is running'), 60_000);
    const bannerMs = performance.now() - started;
    const stopping = performance.now();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGINT');
    await exited;
    for (const port of ports) await until(async () => !(await isPortOpen(port)), 30_000);
    return { readyMs: Math.round(readyMs), bannerMs: Math.round(bannerMs), stopMs: Math.round(performance.now() - stopping) };
  } catch (error) {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    throw new Error(`${(error as Error).message}\n${output.slice(-2000)}`);
  }
}

async function measureTests(): Promise<{ ms: number; passing: number; failing: number; exitCode: number | null }> {
  const started = performance.now();
  let output = '';
  const child = spawn('npm', ['test'], { cwd: PROJECT_ROOT, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const count = (word: string) => [...output.matchAll(new RegExp(`(\\d+) ${word}`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
  return { ms: Math.round(performance.now() - started), passing: count('passing'), failing: count('failing'), exitCode };
}

export async function benchFoundation(options: { tests: boolean }): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'intake-bench-'));
  await chmod(dataDir, 0o755);
  const ports = {
    PORT: await freePort(),
    TEMPORAL_PORT: await freePort(),
    TEMPORAL_UI_PORT: await freePort(),
    DEV_POSTGRES_PORT: await freePort(),
  };
  const env = {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  };
  const cold = await measureStart(env, Object.values(ports));
  const warm = await measureStart(env, Object.values(ports));
  await rm(dataDir, { recursive: true, force: true });
  const tests = options.tests ? await measureTests() : null;
  return {
    benchmark: 'foundation',
    measuredAt: new Date().toISOString(),
    coldStart: cold,
    warmStart: warm,
    npmTest: tests,
    targets: { coldStartReadyMs: 90_000, npmTestMs: 15 * 60_000 },
  };
}
