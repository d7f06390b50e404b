-- The session drainer (a long-running activity in the worker) takes requested wakes from this
-- table and processes them without a workflow task; it tells the session's workflow (status,
-- progress, idle timer) at most once per AGENT_WORKFLOW_SIGNAL_SECONDS, and at once when the
-- workflow has something to do (the session ended, analyses wait for credits or the provider).
-- NULL: never told, or the last signal failed.
ALTER TABLE agent_sessions ADD COLUMN workflow_signalled_at timestamptz;
