import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { DatabasePool } from 'slonik';
import { createActivities } from '../../activities/index.js';
import { testStack, workflowBundle } from './stack.js';

export interface TestWorker {
  taskQueue: string;
  stop(): Promise<void>;
}

/** A real worker on a task queue of its own, running the shared prebuilt bundle. */
export async function startTestWorker(pool: DatabasePool): Promise<TestWorker> {
  const { temporal } = await testStack();
  const connection = await NativeConnection.connect({ address: temporal.address });
  const taskQueue = `test-${randomUUID()}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    activities: createActivities({ pool }),
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
