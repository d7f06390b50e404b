/**
 * Where an erased person's e-mail may be, in the order the erasure searches (issue 32, point 2).
 * The names are stored in `person-erasure` histories (activity arguments) and in erasures' counts:
 * new places are appended, none renamed.
 */
export const ERASURE_PLACES = [
  'feedback_records',
  'agent_participants',
  'agent_sessions',
  'agent_events',
  'agent_event_revisions',
  'agent_signals',
  'recordings',
  'transcript_utterances',
  'metadata_values',
  'coding_sessions',
  'domain_events',
  'webhook_deliveries',
  'webhook_delivery_attempts',
] as const;

export type ErasurePlace = (typeof ERASURE_PLACES)[number];
