-- When the drainer last told the session's workflow that its analyses wait (for credits or for the
-- provider): a hold is told once, and again at most every AGENT_WORKFLOW_SIGNAL_SECONDS while it
-- lasts (which keeps the workflow from closing idle under it), not on every analysis round the
-- drainer holds. It counts only with workflow_signalled_at set, which the drainer clears when it
-- takes the turn and sets again once the signal was sent. NULL: no hold told, the last one ended
-- (an analysis round that was not held), or the last signal failed.
ALTER TABLE agent_sessions ADD COLUMN hold_signalled_at timestamptz;
