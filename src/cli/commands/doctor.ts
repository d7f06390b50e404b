import { randomUUID } from 'node:crypto';
import { readStackInfo } from '../../dev/stack-file.js';
import { connectTemporalClient } from '../../temporal/connection.js';
import { diagnosticsWorkflowId } from '../../temporal/ids.js';
import { taskQueues } from '../../temporal/task-queues.js';
import { DIAGNOSTICS_WORKFLOW, type DiagnosticsInput, type DiagnosticsResult } from '../../../workflows/diagnostics/contract.js';
import { CliError, type CliContext } from '../context.js';

/** Runs the diagnostics workflow end to end: Temporal reachable, a worker polling, PostgreSQL reachable from it. */
export async function doctor(ctx: CliContext) {
  const { address, result } = await diagnostics(ctx, 'intake doctor');
  return { ok: true, temporalAddress: address, ...result };
}

/** The diagnostics workflow run once: the Temporal address, and what a running worker of this deployment reports. */
export async function diagnostics(ctx: CliContext, requestedBy: string): Promise<{ address: string; result: DiagnosticsResult }> {
  const address = ctx.config.temporal.address ?? (await readStackInfo(ctx.config.dataDir))?.temporalAddress;
  if (!address) throw new CliError('TEMPORAL_ADDRESS is not set and no dev stack is running here.');
  const { client, connection } = await connectTemporalClient({
    temporal: { ...ctx.config.temporal, address, payloadKeys: await ctx.payloadKeys() },
  });
  try {
    const input: DiagnosticsInput = { version: 1, requestedBy };
    const result = await connection.withDeadline(Date.now() + 30_000, () =>
      client.workflow.execute<(i: DiagnosticsInput) => Promise<DiagnosticsResult>>(DIAGNOSTICS_WORKFLOW, {
        workflowId: diagnosticsWorkflowId(randomUUID()),
        taskQueue: taskQueues(ctx.config).main,
        args: [input],
        workflowExecutionTimeout: '30s',
      }),
    );
    return { address, result };
  } finally {
    await connection.close();
  }
}
