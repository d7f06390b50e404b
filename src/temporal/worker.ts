import os from 'node:os';
import { Worker, type NativeConnection, type WorkerInterceptors, type WorkerOptions } from '@temporalio/worker';
import type { ActivityMetrics } from '../metrics/activity-metrics.js';
import { workflowsEntry, resolveFromRoot } from '../paths.js';
import { mediaActivityObserver } from './activity-interceptor.js';
import { temporalDataConverter, type PayloadKey } from './codec.js';
import { tracingActivityInterceptors, tracingClientInterceptors, WORKFLOW_INTERCEPTOR_MODULES, workflowSinks } from './tracing.js';

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** The activities it registers, built by the composition root (activities/index.ts createActivities). */
  activities: NonNullable<WorkerOptions['activities']>;
  /** The worker's activity metrics (media phases); none in tests that do not read them. */
  metrics?: ActivityMetrics | undefined;
  /** A prebuilt bundle (`npm run build`); without one the worker bundles the sources at start. */
  workflowBundlePath?: string | undefined;
  shutdownGraceSeconds?: number;
  identity?: string;
  /** The payload codec's keys (every client and worker of a deployment has the same). */
  payloadKeys: PayloadKey[] | undefined;
  /** A worker for activities only (the media queue), running at most this many at once. */
  activitiesOnly?: { maxConcurrent: number };
}

/**
 * The workflows a worker runs: a prebuilt bundle (`npm run build`, with the workflow interceptors
 * bundled in), or the sources bundled at start with the same interceptors; and the sinks they call.
 */
export function workflowSource(bundlePath: string | undefined): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'sinks'> {
  return {
    ...(bundlePath ? { workflowBundle: { codePath: resolveFromRoot(bundlePath) } } : { workflowsPath: workflowsEntry() }),
    sinks: workflowSinks(),
  };
}

/** The interceptors of every worker (tests' included): tracing (outermost, when on), then metrics. */
export function workerInterceptors(deps: { metrics?: ActivityMetrics | undefined }): WorkerInterceptors {
  return {
    activity: [...tracingActivityInterceptors(), mediaActivityObserver(deps.metrics)],
    client: { workflow: tracingClientInterceptors() },
  };
}

/**
 * This process's worker identity, `pid@host` (the SDK's default, made explicit here): the drainer
 * shards' liveness rows carry it, and the fleet tests and benchmarks read the pid back from the
 * identity Temporal records on a pending activity or a poller (pidOfWorkerIdentity).
 */
export function workerIdentity(): string {
  return `${process.pid}@${os.hostname()}`;
}

/** The pid of a `pid@host` worker identity, or null for another form. */
export function pidOfWorkerIdentity(identity: string | null | undefined): number | null {
  const match = /^(\d+)@/.exec(identity ?? '');
  return match ? Number(match[1]) : null;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    dataConverter: temporalDataConverter(deps.payloadKeys),
    activities: deps.activities,
    interceptors: {
      ...workerInterceptors(deps),
      ...(deps.workflowBundlePath ? {} : { workflowModules: [...WORKFLOW_INTERCEPTOR_MODULES] }),
    },
    ...(deps.activitiesOnly
      ? { maxConcurrentActivityTaskExecutions: deps.activitiesOnly.maxConcurrent }
      : workflowSource(deps.workflowBundlePath)),
    shutdownGraceTime: `${deps.shutdownGraceSeconds ?? 30}s`,
    identity: deps.identity ?? workerIdentity(),
  });
}
