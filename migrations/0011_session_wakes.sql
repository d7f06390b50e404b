-- Coalesced wake-ups of agent session workflows. An ingest that gives the workflow work sets
-- wake_requested_at (when it was null) in its own transaction, and only that ingest signals the
-- workflow; the workflow clears it, under the session's lock, when a processing pass ends with
-- nothing more it may process now. A wake older than a few seconds was never taken (the signal was
-- lost, Temporal was unreachable): the reconciler schedule finds it through this index.
ALTER TABLE agent_sessions ADD COLUMN wake_requested_at timestamptz;
CREATE INDEX agent_sessions_wake_idx ON agent_sessions (wake_requested_at) WHERE wake_requested_at IS NOT NULL;
