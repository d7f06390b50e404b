import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { DatabasePool } from 'slonik';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import { LocalSignalExtractor } from '../../src/providers/signal-extractor/local.js';
import { testStack, workflowBundle } from './stack.js';

export interface TestWorker {
  taskQueue: string;
  stop(): Promise<void>;
}

/** The activities' dependencies as tests use them: the local extractor, one credit per analysis. */
export function testActivityDeps(pool: DatabasePool, overrides: Partial<ActivityDeps> = {}): ActivityDeps {
  return { pool, extractor: new LocalSignalExtractor(), analysisCreditCost: 1, ...overrides };
}

/** A real worker on a task queue of its own (or the given one), running the shared prebuilt bundle. */
export async function startTestWorker(pool: DatabasePool, options: { taskQueue?: string; deps?: Partial<ActivityDeps> } = {}): Promise<TestWorker> {
  const { temporal } = await testStack();
  const connection = await NativeConnection.connect({ address: temporal.address });
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    activities: createActivities(testActivityDeps(pool, options.deps)),
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: '2s',
  });
  const running = worker.run();
  return {
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
