// Workflow ids, in one place. Each is a pure function defined beside its workflow's contract, so
// that workflows (which may not import src/) and the API share it.
export { diagnosticsWorkflowId } from '../../workflows/diagnostics/contract.js';
export { agentSessionWorkflowId } from '../../workflows/agent-session/contract.js';
export { retentionSweepWorkflowId, RETENTION_SCHEDULE_ID } from '../../workflows/retention-sweep/contract.js';
export { mediaIngestionWorkflowId } from '../../workflows/media-ingestion/contract.js';
export { recordingDeletionWorkflowId } from '../../workflows/recording-deletion/contract.js';
export { personErasureWorkflowId } from '../../workflows/person-erasure/contract.js';
