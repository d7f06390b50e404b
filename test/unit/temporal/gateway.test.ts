import { strict as assert } from 'node:assert';
import { createServer, type Server, type Socket } from 'node:net';
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { DependencyUnavailableError } from '../../../src/errors.js';
import { DEADLINES, deadlineAfter, TemporalGateway, temporalFailure } from '../../../src/temporal/gateway.js';

describe('Temporal gateway', () => {
  describe('temporalFailure: the one mapping of Temporal errors', () => {
    it('gives not found, already started, a failed update and an existing schedule their domain meaning', () => {
      assert.deepEqual(temporalFailure(new WorkflowNotFoundError('gone', 'media-ingestion/x', undefined)), { kind: 'not_found' });
      assert.deepEqual(temporalFailure(new WorkflowExecutionAlreadyStartedError('open', 'media-ingestion/x', 'mediaIngestionWorkflow')), {
        kind: 'already_started',
      });
      const rejected = new WorkflowUpdateFailedError('update failed', ApplicationFailure.create({ message: 'meeting_not_found' }));
      assert.deepEqual(temporalFailure(rejected), { kind: 'update_failed', message: 'meeting_not_found' });
      assert.deepEqual(temporalFailure(new WorkflowUpdateFailedError('update failed', undefined)), {
        kind: 'update_failed',
        message: 'unknown failure',
      });
      assert.deepEqual(temporalFailure(new ScheduleAlreadyRunning('exists', 'media-reconciler')), { kind: 'schedule_exists' });
    });

    it('maps everything else to a 503 temporal_unavailable that keeps its cause out of the body', () => {
      const grpc = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused' });
      for (const error of [grpc, new Error('4 DEADLINE_EXCEEDED'), 'a string']) {
        const mapped = temporalFailure(error);
        assert.ok(mapped instanceof DependencyUnavailableError);
        assert.equal(mapped.status, 503);
        assert.equal(mapped.errorCode, 'temporal_unavailable');
        assert.deepEqual(mapped.headers, { 'Retry-After': '5' });
        assert.deepEqual(mapped.details, {});
        assert.doesNotMatch(mapped.message, /UNAVAILABLE|refused/);
        assert.equal(mapped.cause, error);
      }
    });
  });

  it('names every deadline, shortest for the readiness probe and best-effort notices', () => {
    assert.deepEqual(Object.keys(DEADLINES).sort(), ['botAccepted', 'diagnostics', 'notify', 'probe', 'request', 'startup']);
    assert.ok(DEADLINES.probe < DEADLINES.notify && DEADLINES.notify < DEADLINES.request && DEADLINES.request < DEADLINES.botAccepted);
  });

  describe('against a Temporal address that accepts connections and never answers', () => {
    let server: Server;
    const sockets = new Set<Socket>();
    let gateway: TemporalGateway;
    let connection: Connection;

    before(async () => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      // No gRPC retry interceptor: its retries are timers that outlive the call they retry, and one that
      // fires after `connection.close()` throws "Channel has been shut down" as an uncaught error into
      // whichever test runs next (seen in CI). The deadlines under test do not depend on retries.
      connection = Connection.lazy({ address: `127.0.0.1:${port}`, interceptors: [] });
      gateway = TemporalGateway.of(new Client({ connection }));
    });

    after(async () => {
      await connection.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('the readiness probe says unreachable within its deadline', async () => {
      const started = Date.now();
      assert.equal(await gateway.reachable(), false);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= DEADLINES.probe - 100 && elapsed < DEADLINES.probe + 1500, `took ${elapsed} ms`);
    });

    it('a call past its deadline is a 503 temporal_unavailable; a batch shares one absolute deadline', async () => {
      const started = Date.now();
      const describe = () =>
        gateway.call(deadlineAfter('probe'), (client) => client.workflow.getHandle('media-ingestion/x').describe(), ['not_found']);
      await assert.rejects(
        Promise.all([describe(), describe()]),
        (error: unknown) => error instanceof DependencyUnavailableError && error.errorCode === 'temporal_unavailable',
      );
      const elapsed = Date.now() - started;
      assert.ok(elapsed < DEADLINES.probe + 1500, `took ${elapsed} ms`);
    });
  });
});
