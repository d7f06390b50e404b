-- intake:no-transaction
-- Full, shared and long-running (issue 53, decision 0216), third of four: a revision is found, and
-- deleted with its session, by its session (0039's cascade, the erasure's batches). Built
-- CONCURRENTLY: revisions go on being written meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS agent_event_revisions_session_idx ON agent_event_revisions (session_id);
