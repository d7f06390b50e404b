-- Full, shared and long-running (issue 53, decision 0216): agent_events becomes a table partitioned
-- by session id ranges, and the event-level tables carry the organization.
--
-- Sessions get UUIDv7 ids (the id's first 48 bits are its creation time), so one week's sessions
-- are one range of ids: the events of the sessions created in a week go to that week's partition,
-- the B-trees a week's ingest writes are that week's, and the retention sweep drops a week whose
-- sessions have all expired instead of deleting its rows. The weekly partitions, and the switch of
-- the sessions' id default to uuidv7(), are the partition maintainer's (src/agents/event-partitions.ts,
-- run at worker start and by the retention sweep): each needs a scan of the legacy rows, online, that
-- this transaction must not hold a lock across.
--
-- Nothing is copied: today's table becomes the DEFAULT partition (`agent_events_legacy`) of a new
-- partitioned `agent_events`, its indexes adopted as they are. This transaction is catalogue work
-- and the revisions' backfill below; agent_events is locked only for its last statements.
--
-- A 0.1 process running beside this version (the rolling upgrade) keeps working: its statements name
-- the same table and columns, its inserts find a partition (the default takes any id), and the
-- triggers below fill what it does not write.

-- The organization on every event-level table (decision 0200: the tenant key of per-tenant export
-- and erasure, of a column store's sort key, of tenant sharding). Written by every insert from this
-- version on; NULL on the rows written before it, which stay in the legacy partition until
-- retention removes them (every read by organization goes through the sessions, which have it).
ALTER TABLE agent_events ADD COLUMN organization_id uuid;
ALTER TABLE agent_event_revisions ADD COLUMN organization_id uuid;
ALTER TABLE agent_analysis_jobs ADD COLUMN organization_id uuid;
ALTER TABLE agent_participants ADD COLUMN organization_id uuid;

-- A revision names its session: the foreign key to agent_events(id) goes (a partitioned table's
-- unique keys must hold its partition key, and no index of the weekly partitions is on id alone),
-- and a revision goes with its session instead. NOT VALID: the rows below are filled in this
-- transaction, and the cascade holds from now on.
ALTER TABLE agent_event_revisions ADD COLUMN session_id uuid;
UPDATE agent_event_revisions r SET session_id = e.session_id, organization_id = s.organization_id
FROM agent_events e JOIN agent_sessions s ON s.id = e.session_id
WHERE e.id = r.event_id;
ALTER TABLE agent_event_revisions ADD CONSTRAINT agent_event_revisions_session_id_fkey
  FOREIGN KEY (session_id) REFERENCES agent_sessions (id) ON DELETE CASCADE NOT VALID;
CREATE INDEX agent_event_revisions_session_idx ON agent_event_revisions (session_id);

-- Rows of an event reference it by id without a foreign key: each goes with its session (the
-- revisions above, jobs and signals by their session's cascade), and a metered unit keeps the id
-- of the event it was counted for after the event is gone (billing outlives the conversation; ids
-- are never reused).
ALTER TABLE agent_event_revisions DROP CONSTRAINT agent_event_revisions_event_id_fkey;
ALTER TABLE agent_analysis_jobs DROP CONSTRAINT agent_analysis_jobs_event_id_fkey;
ALTER TABLE agent_signals DROP CONSTRAINT agent_signals_event_id_fkey;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_event_id_fkey;

-- What a 0.1 process does not write: the organization (from the session), and a revision's
-- session (from its event). This version writes both itself, so the triggers' WHEN skips them.
CREATE FUNCTION intake_fill_session_organization() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.organization_id := (SELECT organization_id FROM agent_sessions WHERE id = NEW.session_id);
  RETURN NEW;
END $$;
CREATE FUNCTION intake_fill_revision_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.session_id IS NULL THEN
    NEW.session_id := (SELECT session_id FROM agent_events WHERE id = NEW.event_id);
  END IF;
  NEW.organization_id := (SELECT organization_id FROM agent_sessions WHERE id = NEW.session_id);
  RETURN NEW;
END $$;
CREATE TRIGGER agent_event_revisions_fill BEFORE INSERT ON agent_event_revisions
  FOR EACH ROW WHEN (NEW.session_id IS NULL OR NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_revision_session();
CREATE TRIGGER agent_analysis_jobs_organization BEFORE INSERT ON agent_analysis_jobs
  FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_session_organization();
CREATE TRIGGER agent_participants_organization BEFORE INSERT ON agent_participants
  FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_session_organization();

-- Today's table becomes the legacy partition, its constraints and indexes renamed with it.
DROP TRIGGER agent_events_late_feedback ON agent_events;
ALTER TABLE agent_events RENAME TO agent_events_legacy;
ALTER TABLE agent_events_legacy RENAME CONSTRAINT agent_events_pkey TO agent_events_legacy_pkey;
ALTER TABLE agent_events_legacy RENAME CONSTRAINT agent_events_session_id_sequence_key TO agent_events_legacy_session_id_sequence_key;
ALTER TABLE agent_events_legacy RENAME CONSTRAINT agent_events_session_id_external_event_id_key TO agent_events_legacy_session_id_external_event_id_key;
ALTER TABLE agent_events_legacy RENAME CONSTRAINT agent_events_session_id_fkey TO agent_events_legacy_session_id_fkey;
ALTER INDEX agent_events_unprocessed_idx RENAME TO agent_events_legacy_unprocessed_idx;

-- The same columns, defaults and checks; the keys hold the partition key (the session id).
CREATE TABLE agent_events (LIKE agent_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (session_id);
ALTER SEQUENCE agent_events_id_seq OWNED BY agent_events.id;
ALTER TABLE agent_events ADD CONSTRAINT agent_events_session_id_sequence_key UNIQUE (session_id, sequence);
ALTER TABLE agent_events ADD CONSTRAINT agent_events_session_id_external_event_id_key UNIQUE (session_id, external_event_id);
ALTER TABLE agent_events ADD CONSTRAINT agent_events_session_id_fkey
  FOREIGN KEY (session_id) REFERENCES agent_sessions (id) ON DELETE CASCADE;
CREATE INDEX agent_events_unprocessed_idx ON agent_events (session_id, sequence) WHERE processed_revision <> revision;

-- The legacy rows take any id no weekly partition holds. With no other partition yet, attaching it
-- checks nothing; its indexes and foreign key are adopted as the parent's.
ALTER TABLE agent_events ATTACH PARTITION agent_events_legacy DEFAULT;

CREATE TRIGGER agent_events_late_feedback BEFORE INSERT ON agent_events
  FOR EACH ROW WHEN (NEW.type = 'feedback' AND NEW.processed_revision IS NULL)
  EXECUTE FUNCTION agent_events_mark_late_feedback();
CREATE TRIGGER agent_events_organization BEFORE INSERT ON agent_events
  FOR EACH ROW WHEN (NEW.organization_id IS NULL) EXECUTE FUNCTION intake_fill_session_organization();

-- The partition maintainer's bookkeeping: the range of session ids the weekly partitions cover (from
-- `low` to `high`), and the legacy sessions whose random ids fall in it. Those stay in the legacy
-- partition, each weekly partition split around them, so nothing is ever moved between partitions.
CREATE TABLE agent_event_partition_window (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  low uuid NOT NULL,
  high uuid NOT NULL,
  legacy_ids uuid[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
