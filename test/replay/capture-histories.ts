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
import { agentSessionWorkflowId, diagnosticsWorkflowId } from '../../src/temporal/ids.js';
import { eventsIngested } from '../../workflows/agent-session/contract.js';
import { agentSessionWorkflow } from '../../workflows/agent-session/workflow.js';
import { diagnosticsWorkflow } from '../../workflows/diagnostics/workflow.js';
import { testConfig } from '../helpers/config.js';
import { createTestDatabase, stopTestStack, testStack } from '../helpers/stack.js';
import { startTestWorker } from '../helpers/worker.js';

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
const out = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');

async function save(name: string, history: Parameters<typeof historyToJSON>[0]): Promise<void> {
  const file = path.join(out, name);
  await writeFile(file, `${historyToJSON(history)}\n`);
  process.stdout.write(`wrote ${file}\n`);
}
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
  await save('diagnostics-v1.json', await handle.fetchHistory());

  // An agent session: started by one ingest, signalled by two more (one ends it), closed when idle.
  const session = await client.workflow.signalWithStart(agentSessionWorkflow, {
    workflowId: agentSessionWorkflowId('00000000-0000-4000-8000-00000000c0de'),
    taskQueue: worker.taskQueue,
    args: [{ version: 1, organizationId: '00000000-0000-4000-8000-0000000000aa', sessionId: '00000000-0000-4000-8000-00000000c0de', idleTimeoutSeconds: 3 }],
    signal: eventsIngested,
    signalArgs: [{ highestSequence: 2, status: 'open', processingStatus: 'pending' }],
  });
  await session.signal(eventsIngested, { highestSequence: 5, status: 'open', processingStatus: 'pending' });
  await session.signal(eventsIngested, { highestSequence: 6, status: 'ended', processingStatus: 'billing_blocked' });
  await session.result();
  await save('agent-session-v1.json', await session.fetchHistory());
} finally {
  await connection.close();
  await worker.stop();
  await pool.end();
  await stopTestStack();
}
