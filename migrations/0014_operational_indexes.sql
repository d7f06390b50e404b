-- Partial indexes for the worker's operational gauges (/metrics), so that a scrape counts a few
-- index entries instead of scanning the tables: sessions held for credits, meeting bots not done.
CREATE INDEX agent_sessions_billing_blocked_idx ON agent_sessions (id) WHERE processing_status = 'billing_blocked';
CREATE INDEX meeting_joins_active_idx ON meeting_joins (bot_state) WHERE bot_state NOT IN ('done', 'failed');
