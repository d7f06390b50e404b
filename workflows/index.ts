// Every workflow the worker runs. Deterministic code only (see eslint.config.js).
export { diagnosticsWorkflow } from './diagnostics/workflow.js';
export { agentSessionWorkflow } from './agent-session/workflow.js';
