/**
 * Captures the replay suite's histories: runs each workflow once against the harness's real
 * PostgreSQL and Temporal, and writes its history to test/replay/histories/<name>.json.
 * Run after a deliberate workflow change (behind `patched()`): `npx tsx test/replay/capture-histories.ts`.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createDatabasePool } from '../../src/db/pool.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { connectTemporalClient } from '../../src/temporal/connection.js';
import { diagnosticsWorkflowId } from '../../src/temporal/ids.js';
import { diagnosticsWorkflow } from '../../workflows/diagnostics/workflow.js';
import { testConfig } from '../helpers/config.js';
import { createTestDatabase, stopTestStack, testStack } from '../helpers/stack.js';
import { startTestWorker } from '../helpers/worker.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
const out = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');
const pool = await createDatabasePool(await createTestDatabase());
const worker = await startTestWorker(pool);
const { client, connection } = await connectTemporalClient({ temporal: { ...testConfig().temporal, address: (await testStack()).temporal.address } });
try {
  const handle = await client.workflow.start(diagnosticsWorkflow, {
    workflowId: diagnosticsWorkflowId('replay-capture'),
    taskQueue: worker.taskQueue,
    args: [{ version: 1, requestedBy: 'capture' }],
  });
  await handle.result();
  const file = path.join(out, 'diagnostics-v1.json');
  await writeFile(file, `${historyToJSON(await handle.fetchHistory())}\n`);
  process.stdout.write(`wrote ${file}\n`);
} finally {
  await connection.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
}
