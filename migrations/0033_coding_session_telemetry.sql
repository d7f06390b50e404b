-- Coding-agent sessions sent as telemetry (issue 35, point 4): Claude Code's OpenTelemetry events
-- arrive a few at a time, each export appending to the session its `session.id` names. Uploaded
-- sessions stay whole files, the same file the same session (content_hash); telemetry sessions are
-- keyed by that external id within the organization, and remember the application whose ingest
-- secret created them. docs/decisions/0204.
ALTER TABLE coding_sessions
  ADD COLUMN source text NOT NULL DEFAULT 'upload' CHECK (source IN ('upload', 'telemetry')),
  ADD COLUMN external_id text CHECK (length(external_id) BETWEEN 1 AND 512),
  ADD COLUMN agent_application_id uuid REFERENCES agent_applications (id) ON DELETE SET NULL,
  ADD COLUMN agent_version text,
  ADD COLUMN updated_at timestamptz(3) NOT NULL DEFAULT now(),
  ALTER COLUMN content_hash DROP NOT NULL;

ALTER TABLE coding_sessions DROP CONSTRAINT coding_sessions_format_check;
ALTER TABLE coding_sessions
  ADD CONSTRAINT coding_sessions_format_check CHECK (format IN ('normalized', 'claude-code', 'codex', 'claude-code-telemetry')),
  ADD CONSTRAINT coding_sessions_source_key_check CHECK (
    (source = 'upload' AND content_hash IS NOT NULL AND external_id IS NULL)
    OR (source = 'telemetry' AND content_hash IS NULL AND external_id IS NOT NULL));

CREATE UNIQUE INDEX coding_sessions_external_id_idx ON coding_sessions (organization_id, external_id) WHERE external_id IS NOT NULL;
-- list-agent-sessions: the organization's sessions, newest first.
CREATE INDEX coding_sessions_listing_idx ON coding_sessions (organization_id, created_at DESC, id DESC);
