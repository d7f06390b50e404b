import { readStackInfo } from '../../dev/stack-file.js';
import { DependencyUnavailableError } from '../../errors.js';
import { connectTemporalClient } from '../../temporal/connection.js';
import { runDiagnostics } from '../../temporal/diagnostics-workflow.js';
import { TemporalGateway } from '../../temporal/gateway.js';
import { taskQueues } from '../../temporal/task-queues.js';
import type { DiagnosticsResult } from '../../../workflows/diagnostics/contract.js';
import { CliError, type CliContext } from '../context.js';

/** Runs the diagnostics workflow end to end: Temporal reachable, a worker polling, PostgreSQL reachable from it. */
export async function doctor(ctx: CliContext) {
  const { address, cluster, result } = await diagnostics(ctx, 'intake doctor');
  return { ok: true, temporalAddress: address, temporal: cluster, ...result };
}

/** The diagnostics workflow run once: the Temporal address, and what a running worker of this deployment reports. */
export async function diagnostics(
  ctx: CliContext,
  requestedBy: string,
): Promise<{ address: string; cluster: Awaited<ReturnType<TemporalGateway['clusterInfo']>>; result: DiagnosticsResult }> {
  const address = ctx.config.temporal.address ?? (await readStackInfo(ctx.config.dataDir))?.temporalAddress;
  if (!address) throw new CliError('TEMPORAL_ADDRESS is not set and no dev stack is running here.');
  const temporal = await connectTemporalClient({
    temporal: { ...ctx.config.temporal, address, payloadKeys: await ctx.payloadKeys() },
  });
  try {
    const gateway = TemporalGateway.of(temporal);
    return {
      address,
      cluster: await gateway.clusterInfo(),
      result: await runDiagnostics(gateway, taskQueues(ctx.config).main, requestedBy),
    };
  } catch (error) {
    // A diagnosis names the cause (no worker polling, a failed check), not only `temporal_unavailable`.
    const cause = error instanceof DependencyUnavailableError ? error.cause : error;
    throw new CliError(`the diagnostics workflow did not complete: ${cause instanceof Error ? cause.message : String(cause)}`);
  } finally {
    await temporal.connection.close();
  }
}
