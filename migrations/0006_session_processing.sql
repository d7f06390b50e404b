-- The agent session workflow's processing: which revision of each event it has processed, the
-- metered units it counted, the qualitative signals it replaced, and the retention sweep's index.

-- The revision the session workflow last processed; pending work is every event whose stored
-- revision differs (new events, and revisions of events below the watermark).
ALTER TABLE agent_events ADD COLUMN processed_revision integer;
CREATE INDEX agent_events_unprocessed_idx ON agent_events (session_id, sequence)
  WHERE processed_revision IS DISTINCT FROM revision;

-- One explicit-feedback signal per feedback event (a revised rating updates it in place).
CREATE UNIQUE INDEX agent_signals_explicit_key ON agent_signals (event_id) WHERE source = 'explicit_feedback';
-- Qualitative signals carry the analysed revision and the extractor that produced them.
ALTER TABLE agent_signals ADD COLUMN event_revision integer;
ALTER TABLE agent_signals ADD COLUMN producer text;
CREATE INDEX agent_signals_event_idx ON agent_signals (event_id);
ALTER TABLE agent_analysis_jobs ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE agent_analysis_jobs ADD COLUMN error_code text;
ALTER TABLE agent_analysis_jobs ADD COLUMN credits_spent integer NOT NULL DEFAULT 0;
CREATE INDEX agent_analysis_jobs_queued_idx ON agent_analysis_jobs (session_id, id) WHERE status = 'queued';
-- Deleting a session (retention, purge) finds its jobs and its usage rows by these.
CREATE INDEX agent_analysis_jobs_session_idx ON agent_analysis_jobs (session_id);

-- Metered units. A unit is counted once per event and unit (retries and revisions add none); it
-- outlives the conversation it was counted for (billing history survives retention).
CREATE TABLE usage_records (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  application_id uuid REFERENCES agent_applications (id) ON DELETE SET NULL,
  session_id uuid REFERENCES agent_sessions (id) ON DELETE SET NULL,
  event_id bigint REFERENCES agent_events (id) ON DELETE SET NULL,
  unit text NOT NULL CHECK (unit IN ('agent_response_processed')),
  quantity integer NOT NULL CHECK (quantity > 0),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, unit)
);
CREATE INDEX usage_records_organization_idx ON usage_records (organization_id, unit, recorded_at);
CREATE INDEX usage_records_session_idx ON usage_records (session_id) WHERE session_id IS NOT NULL;

-- The retention sweep looks for an application's conversations by their last activity.
CREATE INDEX agent_sessions_retention_idx ON agent_sessions (application_id, last_ingest_at);
