/**
 * Captures the recording deletion workflow's history (issue 32) like capture-histories.ts does for
 * the others: `npx tsx test/replay/capture-recording-deletion.ts`. One run: a recording with a
 * rendition in the store is deleted over REST; the workflow stops its (closed) media ingestion,
 * deletes the rendition, waits, searches again, finds nothing and finishes.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDatabasePool } from '../../src/db/pool.js';
import { recordingDeletionWorkflowId } from '../../src/temporal/ids.js';
import { startTestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createTestOrg } from '../../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../../harness/stack.js';
import { startTestWorker } from '../../harness/worker.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-capture-deletion-'));
const pool = await createDatabasePool(await createTestDatabase());
const worker = await startTestWorker(pool, { drainer: false, deps: { mediaDir } });
const api = await startTestApi({
  pool,
  config: testConfig({ STORAGE_DIR: mediaDir, TEMPORAL_TASK_QUEUE: worker.taskQueue, MEDIA_HEARTBEAT_TIMEOUT_SECONDS: '2' }),
});
try {
  const org = await createTestOrg(pool);
  const headers = { 'X-Service-Api-Key': org.apiKey };
  const created = await api.request('/v3/rest/recordings', { method: 'POST', headers, json: { record: { externalId: randomUUID() } } });
  const recordingId = created.body.id as string;
  await mkdir(path.join(mediaDir, 'renditions', recordingId), { recursive: true });
  await writeFile(path.join(mediaDir, 'renditions', recordingId, `${randomUUID()}.m4a`), 'rendition');
  const deleted = await api.request(`/v3/rest/recordings/${recordingId}`, { method: 'DELETE', headers });
  if (deleted.status !== 204) throw new Error(`delete answered ${deleted.status}`);
  const handle = api.temporal.client.workflow.getHandle(recordingDeletionWorkflowId(recordingId));
  console.log(await handle.result());
  await saveHistory('recording-deletion', 'v1', handle);
} finally {
  await api.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
  await rm(mediaDir, { recursive: true, force: true });
}
