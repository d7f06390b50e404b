import { Worker, type NativeConnection, type WorkerInterceptors, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import { workflowsEntry, resolveFromRoot } from '../paths.js';
import { mediaActivityObserver } from './activity-interceptor.js';
import { temporalDataConverter, type PayloadKey } from './codec.js';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityDeps;
  /** A prebuilt bundle (`npm run build`); without one the worker bundles the sources at start. */
  workflowBundlePath?: string | undefined;
  shutdownGraceSeconds?: number;
  identity?: string;
  /** The payload codec's keys (every client and worker of a deployment has the same). */
  payloadKeys: PayloadKey[] | undefined;
  /** A worker for activities only (the media queue), running at most this many at once. */
  activitiesOnly?: { maxConcurrent: number };
}

export function workflowSource(bundlePath: string | undefined): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  return bundlePath ? { workflowBundle: { codePath: resolveFromRoot(bundlePath) } } : { workflowsPath: workflowsEntry() };
}

/** The interceptors of every worker (tests' included). */
export function workerInterceptors(activities: Pick<ActivityDeps, 'metrics'>): WorkerInterceptors {
  return {
    activity: [mediaActivityObserver(activities.metrics)],
  };
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    dataConverter: temporalDataConverter(deps.payloadKeys),
    activities: createActivities(deps.activities),
    interceptors: workerInterceptors(deps.activities),
    ...(deps.activitiesOnly
      ? { maxConcurrentActivityTaskExecutions: deps.activitiesOnly.maxConcurrent }
      : workflowSource(deps.workflowBundlePath)),
    shutdownGraceTime: `${deps.shutdownGraceSeconds ?? 30}s`,
    ...(deps.identity ? { identity: deps.identity } : {}),
  });
}
