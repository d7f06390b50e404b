import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/dev/net.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { deadline, httpStatus, waitFor } from '../helpers/wait.js';
import { connectTemporalClient, type TemporalClient } from '../../src/temporal/connection.js';
import { diagnosticsWorkflowId } from '../../src/temporal/ids.js';
import { diagnosticsWorkflow } from '../../workflows/diagnostics/workflow.js';
import { TEST_SIGNING_SECRET, testConfig } from '../helpers/config.js';
import { createTestDatabase, testStack } from '../helpers/stack.js';

function launch(entry: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'main', entry)], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** The processes whose parent is `pid` (from /proc). */
function childPids(pid: number): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stop(child: ChildProcess, timeoutMs = 20_000): Promise<number | string | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return Promise.race([exited, deadline(timeoutMs, 'still running')]);
}

/** The production entrypoints (`npm run start:api`, `npm run start:worker`) against the harness's services. */
describe('API and worker entrypoints', function () {
  this.timeout(120_000);
  let env: Record<string, string>;
  let temporal: TemporalClient;
  const running: ChildProcess[] = [];

  before(async () => {
    const stack = await testStack();
    env = {
      DATABASE_URL: await createTestDatabase(),
      TEMPORAL_ADDRESS: stack.temporal.address,
      SIGNING_SECRET: TEST_SIGNING_SECRET,
      LOG_LEVEL: 'info',
    };
    temporal = await connectTemporalClient({ temporal: { ...testConfig().temporal, address: stack.temporal.address } });
  });
  after(async () => {
    for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
    await temporal?.connection.close();
  });

  it('API: applies migrations, becomes ready, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const api = launch('api.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' });
    running.push(api.child);
    const ready = await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 30_000);
    assert.ok(ready, api.output().slice(-2000));
    assert.match(api.output(), /"msg":"API listening"/);
    assert.equal(await stop(api.child), 0, api.output().slice(-2000));
  });

  it('API_PROCESSES=2: two API processes share the port; one that dies is replaced; SIGTERM stops them all (exit 0)', async () => {
    const port = await freePort();
    const api = launch('api.ts', { ...env, PORT: String(port), HOST: '127.0.0.1', API_PROCESSES: '2' });
    running.push(api.child);
    const ready = await waitFor(async () => /"processes":2,"msg":"API listening"/.test(api.output()), 30_000);
    assert.ok(ready, api.output().slice(-2000));
    const children = () => childPids(api.child.pid!);
    assert.equal(children().length, 2);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => httpStatus(`http://127.0.0.1:${port}/readyz`)));
    assert.deepEqual([...new Set(statuses)], [200]);
    const [first] = children();
    process.kill(first!, 'SIGKILL');
    const replaced = await waitFor(async () => children().length === 2 && !children().includes(first!), 30_000);
    assert.ok(replaced, api.output().slice(-2000));
    assert.match(api.output(), /an API process exited; starting another/);
    assert.ok(await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 30_000));
    const before = children();
    assert.equal(await stop(api.child), 0, api.output().slice(-2000));
    assert.ok(before.every((pid) => !alive(pid)), 'every API process has exited');
  });

  it('API: refuses to start without SIGNING_SECRET, naming the variable', async () => {
    const { SIGNING_SECRET: _omitted, ...rest } = env;
    const api = launch('api.ts', { ...rest, PORT: String(await freePort()) });
    running.push(api.child);
    const code = await new Promise<number | null>((resolve) => api.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(api.output(), /SIGNING_SECRET is required/);
  });

  it('API: refuses to start in production without PUBLIC_BASE_URL (links are never built from a Host header)', async () => {
    const api = launch('api.ts', { ...env, NODE_ENV: 'production', PORT: String(await freePort()) });
    running.push(api.child);
    const code = await new Promise<number | null>((resolve) => api.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(api.output(), /PUBLIC_BASE_URL \(with NODE_ENV=production\) is required/);
  });

  it('worker: runs workflows on its task queue and drains on SIGTERM', async () => {
    const taskQueue = `entry-${randomUUID()}`;
    const worker = launch('worker.ts', { ...env, TEMPORAL_TASK_QUEUE: taskQueue });
    running.push(worker.child);
    const result = await temporal.client.workflow.execute(diagnosticsWorkflow, {
      workflowId: diagnosticsWorkflowId(randomUUID()),
      taskQueue,
      args: [{ version: 1, requestedBy: 'entrypoint test' }],
      workflowExecutionTimeout: '60s',
    });
    assert.equal(result.worker.taskQueue, taskQueue);
    assert.equal(await stop(worker.child), 0, worker.output().slice(-2000));
    assert.match(worker.output(), /worker stopped/);
  });
});
