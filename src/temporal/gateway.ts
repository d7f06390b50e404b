import {
  Client,
  ScheduleAlreadyRunning,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { DependencyUnavailableError } from '../errors.js';
import type { TemporalClient } from './connection.js';

/**
 * How long each kind of Temporal call may take, in one place. A call past its deadline fails
 * (gRPC DEADLINE_EXCEEDED) instead of waiting on the SDK's retries while Temporal is unreachable.
 */
export const DEADLINES = {
  /** Best-effort notices whose workflow also finds out by itself (the tus endpoint's last byte, a cancelled upload, a session wake). */
  notify: 5_000,
  /** A start, terminate or describe a request (or a batch of wakes) waits for: past it the request answers 503. */
  request: 10_000,
  /** Joining a meeting: the workflow creates the bot (three attempts with backoff) before the update answers. */
  botAccepted: 60_000,
  /** `intake doctor`: a worker runs the diagnostics workflow end to end (its execution timeout is 30 s too). */
  diagnostics: 30_000,
  /** At worker start: its schedules and its session drainer (a failure stops the start, which is retried). */
  startup: 60_000,
  /** The readiness probe's `temporal` check. */
  probe: 2_000,
} as const;

export type Deadline = keyof typeof DEADLINES;

/** The absolute deadline a batch of calls shares: `name`'s duration from now. */
export function deadlineAfter(name: Deadline): Date {
  return new Date(Date.now() + DEADLINES[name]);
}

/** What a failed Temporal call means to the domain; anything else is Temporal being unavailable. */
export type TemporalRefusal =
  /** No such workflow (or it closed): nothing to signal, terminate or describe. */
  | { kind: 'not_found' }
  /** A run of that workflow id is open already (Temporal's id uniqueness). */
  | { kind: 'already_started' }
  /** An update's handler failed: `message` is its failure's (the workflow's own words). */
  | { kind: 'update_failed'; message: string }
  /** The schedule exists already. */
  | { kind: 'schedule_exists' };

/**
 * The one mapping of Temporal errors: a refusal with a domain meaning, or else a 503
 * `temporal_unavailable` (unreachable, past its deadline, or failing in a way no caller can act on;
 * the original error is its `cause`, for the logs, never for the response body).
 */
export function temporalFailure(error: unknown): TemporalRefusal | DependencyUnavailableError {
  if (error instanceof WorkflowNotFoundError) return { kind: 'not_found' };
  if (error instanceof WorkflowExecutionAlreadyStartedError) return { kind: 'already_started' };
  if (error instanceof WorkflowUpdateFailedError) return { kind: 'update_failed', message: error.cause?.message ?? 'unknown failure' };
  if (error instanceof ScheduleAlreadyRunning) return { kind: 'schedule_exists' };
  if (error instanceof DependencyUnavailableError) return error;
  return Object.assign(new DependencyUnavailableError('temporal'), { cause: error });
}

/** A call's result, or the refusals its caller said it handles. */
export type Outcome<T, K extends TemporalRefusal['kind']> =
  | { ok: true; value: T }
  | { ok: false; refusal: Extract<TemporalRefusal, { kind: K }> };

/**
 * The one door to Temporal. Each workflow has its gateway over it (src/agents/session-workflow.ts,
 * src/agents/drainer-workflow.ts, src/recordings/media-workflow.ts,
 * src/recordings/meeting-join-workflow.ts, src/temporal/diagnostics-workflow.ts,
 * src/temporal/schedules.ts); every call of the API, the CLI and the activities goes through one of
 * them and `call`, with a named deadline, its errors mapped by `temporalFailure`.
 */
export class TemporalGateway {
  readonly #client: Client;

  constructor(client: Client) {
    this.#client = client;
  }

  /** The gateway of a connected client (the API's and the CLI's). */
  static of(temporal: TemporalClient | Client): TemporalGateway {
    return new TemporalGateway(temporal instanceof Client ? temporal : temporal.client);
  }

  /**
   * Runs `work` within the deadline: a named one from now, or an absolute one (`deadlineAfter`)
   * that a batch of calls shares. A refusal in `handles` is returned; every other failure is thrown
   * as a 503 `temporal_unavailable` (an unhandled refusal is a failure too).
   */
  async call<T, K extends TemporalRefusal['kind'] = never>(
    deadline: Deadline | Date,
    work: (client: Client) => Promise<T>,
    handles: readonly K[] = [],
  ): Promise<Outcome<T, K>> {
    // Always set explicitly, never inherited: a deadline left in an async context would outlive its call.
    const until = deadline instanceof Date ? deadline.getTime() : Date.now() + DEADLINES[deadline];
    try {
      return { ok: true, value: await this.#client.connection.withDeadline(until, () => work(this.#client)) };
    } catch (error) {
      const failure = temporalFailure(error);
      if (!(failure instanceof DependencyUnavailableError) && (handles as readonly string[]).includes(failure.kind)) {
        return { ok: false, refusal: failure as Extract<TemporalRefusal, { kind: K }> };
      }
      throw failure instanceof DependencyUnavailableError
        ? failure
        : Object.assign(new DependencyUnavailableError('temporal'), { cause: error });
    }
  }

  /** `call` for work whose every failure is a 503 (no refusal handled). */
  async run<T>(deadline: Deadline | Date, work: (client: Client) => Promise<T>): Promise<T> {
    const outcome = await this.call(deadline, work);
    if (!outcome.ok) throw new Error('unreachable: no refusal was handled');
    return outcome.value;
  }

  /**
   * The cluster as `intake doctor` shows it: the server's version and its history shard count,
   * fixed when the cluster's database was created (docs/operations.md, Temporal's shard count).
   */
  async clusterInfo(): Promise<{ serverVersion: string; historyShardCount: number; clusterName: string }> {
    const info = await this.run('probe', (client) => client.connection.workflowService.getClusterInfo({}));
    return { serverVersion: info.serverVersion ?? '', historyShardCount: info.historyShardCount ?? 0, clusterName: info.clusterName ?? '' };
  }

  /** Whether the frontend answers (the readiness probe). */
  async reachable(): Promise<boolean> {
    return this.call('probe', (client) => client.connection.workflowService.getSystemInfo({})).then(
      () => true,
      () => false,
    );
  }
}
