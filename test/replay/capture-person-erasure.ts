/**
 * Captures the person erasure workflow's history (issue 32) like capture-histories.ts does for the
 * others: `npx tsx test/replay/capture-person-erasure.ts [version]`. One run: a person with a feedback record
 * is erased over REST; the workflow searches every place and finishes.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createDatabasePool } from '../../src/db/pool.js';
import { personErasureWorkflowId } from '../../src/temporal/ids.js';
import { startTestApi } from '../../harness/app.js';
import { testConfig } from '../../harness/config.js';
import { createTestKey, createTestOrg } from '../../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../../harness/stack.js';
import { startTestWorker } from '../../harness/worker.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });

const pool = await createDatabasePool(await createTestDatabase());
const worker = await startTestWorker(pool, { drainer: false });
const api = await startTestApi({ pool, config: testConfig({ TEMPORAL_TASK_QUEUE: worker.taskQueue }) });
try {
  const org = await createTestOrg(pool);
  const headers = { 'X-Service-Api-Key': org.apiKey };
  const person = await api.request('/v3/rest/people', { method: 'PUT', headers, json: { email: 'erase.me@example.com' } });
  const source = await api.request('/v3/rest/feedback-sources', { method: 'POST', headers, json: { name: 'Desk', type: 'api' } });
  await api.request(`/v3/rest/feedback-sources/${source.body.id as number}/records`, {
    method: 'POST',
    headers,
    json: {
      external_id: 'r-1',
      display_ts: '2026-11-26T10:00:00Z',
      person_id: person.body.id as number,
      fields: [{ category: 'content', type: 'string', name: 'text', value: 'hi' }],
    },
  });
  const admin = { 'X-Service-Api-Key': (await createTestKey(pool, org.organizationId, ['admin'])).apiKey };
  const erased = await api.request(`/v3/rest/people/${person.body.uuid as string}/erase`, { method: 'POST', headers: admin });
  if (erased.status !== 202) throw new Error(`erase answered ${erased.status}`);
  const handle = api.temporal.client.workflow.getHandle(personErasureWorkflowId(erased.body.erasureId as string));
  console.log(await handle.result());
  // v1: before identifiers were erased (issue 50); v2: with the erase-identifiers patch.
  await saveHistory('person-erasure', process.argv[2] ?? 'v2', handle);
} finally {
  await api.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
}
