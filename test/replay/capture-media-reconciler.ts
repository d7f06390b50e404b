/**
 * Captures the media reconciler's history (run once when it was introduced):
 * `npx tsx test/replay/capture-media-reconciler.ts`.
 *  - media-reconciler/v1.json: one stranded ingestion (its rows committed, no workflow) started
 *    again, and one interrupted mid-way failed.
 */
import { Runtime } from '@temporalio/worker';
import { saveHistory } from './save-history.js';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { createDatabasePool } from '../../src/db/pool.js';
import { insertIngestion } from '../../src/db/repositories/media-ingestions.js';
import { mediaWorkflowSettings } from '../../src/recordings/media.js';
import { createLogger } from '../../src/logger.js';
import { sdkLogger } from '../../src/temporal/sdk-logger.js';
import { mediaReconcilerWorkflowId } from '../../workflows/media-reconciler/contract.js';
import { mediaReconcilerWorkflow } from '../../workflows/media-reconciler/workflow.js';
import { startTestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createTestOrg } from '../../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../../harness/stack.js';
import { loopbackMediaDeps, startTestWorker } from '../../harness/worker.js';

Runtime.install({ shutdownSignals: [], logger: sdkLogger(createLogger('warn', 'intake-capture')) });

const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-capture-'));
const pool = await createDatabasePool(await createTestDatabase());
const worker = await startTestWorker(pool, { deps: loopbackMediaDeps(dir) });
const api = await startTestApi({ pool, config: testConfig({ STORAGE_DIR: dir, TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
try {
  const org = await createTestOrg(pool);
  for (const phase of ['waiting', 'encoding'] as const) {
    const res = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() } },
    });
    const recordingId = res.body.id as string;
    await pool.transaction(async (tx) => {
      // The URL does not resolve: the restarted ingestion fails on its own, after the reconciler's run.
      await tx.query(
        sql.unsafe`UPDATE recordings SET asset_source_url = 'http://nothing.invalid/a.wav', asset_status = 'queued' WHERE id = ${recordingId}`,
      );
      const row = await insertIngestion(tx, { organizationId: org.organizationId, recordingId, kind: 'url' });
      await tx.query(sql.unsafe`UPDATE media_ingestions SET phase = ${phase} WHERE id = ${row.id}`);
    });
  }
  const handle = await api.temporal.client.workflow.start(mediaReconcilerWorkflow, {
    workflowId: `${mediaReconcilerWorkflowId()}/replay-capture`,
    taskQueue: worker.taskQueue,
    args: [{ version: 1, olderThanSeconds: 0, settings: mediaWorkflowSettings(api.deps.config) }],
  });
  const result = await handle.result();
  if (result.restarted !== 1 || result.failed !== 1)
    throw new Error(`expected one restarted and one failed, got ${JSON.stringify(result)}`);
  await saveHistory('media-reconciler', 'v1', handle);
} finally {
  await api.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
}
