// Every workflow the worker runs. Deterministic code only (see eslint.config.js).
export { diagnosticsWorkflow } from './diagnostics/workflow.js';
export { agentSessionWorkflow } from './agent-session/workflow.js';
export { retentionSweepWorkflow } from './retention-sweep/workflow.js';
export { mediaIngestionWorkflow } from './media-ingestion/workflow.js';
export { meetingJoinWorkflow } from './meeting-join/workflow.js';
export { sessionWakesWorkflow } from './session-wakes/workflow.js';
export { mediaReconcilerWorkflow } from './media-reconciler/workflow.js';
export { sessionDrainerWorkflow } from './session-drainer/workflow.js';
export { webhookEndpointWorkflow } from './webhook-endpoint/workflow.js';
export { recordingDeletionWorkflow } from './recording-deletion/workflow.js';
export { personErasureWorkflow } from './person-erasure/workflow.js';
