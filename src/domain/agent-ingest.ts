/**
 * The agent chat ingest request (spec: "Agent chat ingest request (session)"), as Ajv leaves it
 * after validation. Sanitizing maps a request to a request of the same shape.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface AgentContext {
  productArea?: string;
  surface?: string;
  routeTemplate?: string;
  pathname?: string;
  entryPoint?: string;
  entityType?: string;
  entityId?: string;
  environment?: string;
  release?: string;
  /** Up to 50 JSON values. */
  properties?: JsonObject;
}

export interface AgentParticipant {
  externalId?: string;
  displayName?: string;
  username?: string;
  email?: string;
  personId?: string;
  companyExternalId?: string;
  boundary?: 'external' | 'internal';
  ownerUserId?: string;
  properties?: JsonObject;
}

export type AgentEventType = 'user_message' | 'assistant_message' | 'feedback';

export interface AgentFeedback {
  targetEventExternalId: string;
  rating?: 'positive' | 'negative';
  labels?: string[];
  comment?: string;
}

export interface AgentEvent {
  externalEventId: string;
  sequence: number;
  revision: number;
  occurredAt: string;
  type: AgentEventType;
  participantExternalId?: string;
  content?: string;
  final?: boolean;
  model?: { provider?: string; name?: string };
  usage?: { inputTokens?: number; outputTokens?: number; latencyMs?: number };
  trace?: { traceId?: string; spanId?: string };
  feedback?: AgentFeedback;
  context?: AgentContext;
}

export type AgentSessionStatus = 'open' | 'ended' | 'abandoned';

export interface AgentIngestRequest {
  agentKey: string;
  externalSessionId: string;
  status?: AgentSessionStatus;
  agentVersion?: string;
  source?: { sdk: string; version: string };
  context?: AgentContext;
  participants?: AgentParticipant[];
  events: AgentEvent[];
}
