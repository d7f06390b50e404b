-- Deleting an agent application with its conversations (issue 32, point 1): the application is
-- deleted at once (deleted_at); its sessions disappear from every read at once and the retention
-- sweep deletes them in batches (a Temporal workflow: a crash resumes where it stopped).
ALTER TABLE agent_applications ADD COLUMN sessions_deleted_at timestamptz;
CREATE INDEX agent_applications_sessions_deleted_idx ON agent_applications (id) WHERE sessions_deleted_at IS NOT NULL;
