import { randomUUID } from 'node:crypto';
import type { TemporalGateway } from './gateway.js';
import {
  DIAGNOSTICS_WORKFLOW,
  diagnosticsWorkflowId,
  type DiagnosticsInput,
  type DiagnosticsResult,
} from '../../workflows/diagnostics/contract.js';

/**
 * The gateway of `diagnostics/<uuid>`: runs the diagnostics workflow once, end to end, on the
 * task queue's workers (within the `diagnostics` deadline).
 */
export async function runDiagnostics(temporal: TemporalGateway, taskQueue: string, requestedBy: string): Promise<DiagnosticsResult> {
  const input: DiagnosticsInput = { requestedBy };
  return temporal.run('diagnostics', (client) =>
    client.workflow.execute<(i: DiagnosticsInput) => Promise<DiagnosticsResult>>(DIAGNOSTICS_WORKFLOW, {
      workflowId: diagnosticsWorkflowId(randomUUID()),
      taskQueue,
      args: [input],
      workflowExecutionTimeout: '30s',
    }),
  );
}
