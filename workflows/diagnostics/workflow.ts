import { proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { DiagnosticsActivities } from '../../activities/diagnostics.js';
import { STATUS } from '../search-attributes.js';
import { phaseQuery, type DiagnosticsInput, type DiagnosticsResult } from './contract.js';

const { checkDatabase, describeWorker } = proxyActivities<DiagnosticsActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export async function diagnosticsWorkflow(input: DiagnosticsInput): Promise<DiagnosticsResult> {
  let phase = 'checking-database';
  setHandler(phaseQuery, () => phase);
  upsertSearchAttributes([{ key: STATUS, value: phase }]);
  const database = await checkDatabase();
  phase = 'describing-worker';
  const worker = await describeWorker();
  phase = 'done';
  upsertSearchAttributes([{ key: STATUS, value: phase }]);
  return { version: 1, requestedBy: input.requestedBy, database, worker };
}
