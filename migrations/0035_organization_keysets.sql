-- intake:no-transaction
-- Full, shared and long-running (issue 53, decision 0212): an organization's export and a person's
-- erasure read the organization's rows a batch at a time, in key order from the last batch's key.
-- Without an index that starts with the organization and goes on with the key, each batch walked
-- the table's primary key and filtered: the work grew with the table, not with the organization
-- (the growth benchmark: a 24,000-line export took 1 s among 100,000 events and 11 s among 1M).
-- Each table an export or an erasure reads by organization gets (organization_id, id); the tables
-- under a session (events, revisions, participants) are read a batch of the organization's sessions
-- at a time, and a delivery's attempts a batch of its deliveries at a time.
--
-- Built CONCURRENTLY (src/db/migrate.ts: a no-transaction file): ingest, processing and deliveries
-- keep writing while each index builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS agent_sessions_organization_id_idx ON agent_sessions (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS agent_signals_organization_id_idx ON agent_signals (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recordings_organization_id_idx ON recordings (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS feedback_records_organization_id_idx ON feedback_records (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS people_organization_id_idx ON people (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_organization_id_idx ON webhook_deliveries (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS media_ingestions_organization_id_idx ON media_ingestions (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS metadata_records_organization_id_idx ON metadata_records (organization_id, id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS coding_sessions_organization_id_idx ON coding_sessions (organization_id, id);
