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
  // Identifiers (issue 50): a recording's record's external id, an upload's file name.
  'metadata_records',
  'media_ingestions',
] as const;

/** The places of erasures whose workflow started before identifiers were erased (issue 50): their histories replay these. */
export const FIRST_ERASURE_PLACES = ERASURE_PLACES.slice(0, ERASURE_PLACES.indexOf('metadata_records'));

export type ErasurePlace = (typeof ERASURE_PLACES)[number];
