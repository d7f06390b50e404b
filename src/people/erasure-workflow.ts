import type { TemporalGateway } from '../temporal/gateway.js';
import { ORGANIZATION_ID } from '../temporal/search-attributes.js';
import { PERSON_ERASURE_WORKFLOW, personErasureWorkflowId, type PersonErasureInput } from '../../workflows/person-erasure/contract.js';

export interface PersonErasureSettings {
  taskQueue: string;
  heartbeatTimeoutSeconds: number;
}

/** The gateway of `person-erasure/<erasureId>`: starts it (`already_started` when it runs already). */
export async function startPersonErasureWorkflow(
  temporal: TemporalGateway,
  settings: PersonErasureSettings,
  ids: { organizationId: string; erasureId: string },
): Promise<'started' | 'already_started'> {
  const input: PersonErasureInput = { erasureId: ids.erasureId, heartbeatTimeoutSeconds: settings.heartbeatTimeoutSeconds };
  const outcome = await temporal.call(
    'request',
    (client) =>
      client.workflow.start(PERSON_ERASURE_WORKFLOW, {
        workflowId: personErasureWorkflowId(ids.erasureId),
        taskQueue: settings.taskQueue,
        args: [input],
        typedSearchAttributes: [{ key: ORGANIZATION_ID, value: ids.organizationId }],
      }),
    ['already_started'],
  );
  return outcome.ok ? 'started' : 'already_started';
}
