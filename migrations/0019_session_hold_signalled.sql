-- When the drainer last told the session's workflow that its analyses wait (for credits or for the
-- provider). A hold is told once, not on every ingest: while it is told, the drainer's passes leave
-- the queued analyses to the workflow, which runs them when it can. It counts only with
-- workflow_signalled_at set, which the drainer clears when it takes the turn and sets again once the
-- signal was sent. NULL: no hold told, the last one ended (an analysis round that was not held), or
-- the last signal failed.
ALTER TABLE agent_sessions ADD COLUMN hold_signalled_at timestamptz;
