import type { AgentIngestRequestSchema } from '../contracts/agent-ingest.js';

/**
 * The agent chat ingest request (spec: "Agent chat ingest request (session)"), as Ajv leaves it
 * after validation. Sanitizing maps a request to a request of the same shape.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Every shape below is derived from the ingest schema (src/contracts/agent-ingest.ts), not written again. */
export type AgentIngestRequest = AgentIngestRequestSchema;
export type AgentEvent = AgentIngestRequest['events'][number];
export type AgentEventType = AgentEvent['type'];
export type AgentFeedback = NonNullable<AgentEvent['feedback']>;
export type AgentParticipant = NonNullable<AgentIngestRequest['participants']>[number];
export type AgentContext = NonNullable<AgentIngestRequest['context']>;
export type AgentSessionStatus = NonNullable<AgentIngestRequest['status']>;
