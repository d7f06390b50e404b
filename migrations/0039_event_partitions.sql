-- Full, shared and long-running (issue 53, decision 0216), last of four: agent_events becomes a table
-- partitioned by session id ranges.
--
-- Sessions get UUIDv7 ids (the id's first 48 bits are its creation time), so one week's sessions
-- are one range of ids: the events of the sessions created in a week go to that week's partition,
-- the B-trees a week's ingest writes are that week's, and the retention sweep drops a week whose
-- sessions have all expired instead of deleting its rows. The weekly partitions, and the switch of
-- the sessions' id default to uuidv7(), are the partition maintainer's (src/agents/event-partitions.ts,
-- run at API and worker start and by the retention sweep): each needs a scan of the legacy rows,
-- online, that this transaction must not hold a lock across.
--
-- Nothing is copied: today's table becomes the DEFAULT partition (`agent_events_legacy`) of a new
-- partitioned `agent_events`, its indexes adopted as they are. This transaction is catalogue work:
-- agent_events is locked for milliseconds.
--
-- A 0.1 process keeps working: its statements name the same table and columns, and its inserts find
-- a partition (the default takes any id).

-- A revision goes with its session. NOT VALID: the rows 0037 filled are not scanned again; the
-- cascade holds from now on.
ALTER TABLE agent_event_revisions ADD CONSTRAINT agent_event_revisions_session_id_fkey
  FOREIGN KEY (session_id) REFERENCES agent_sessions (id) ON DELETE CASCADE NOT VALID;

-- Rows of an event reference it by id without a foreign key: each goes with its session (the
-- revisions above, jobs and signals by their session's cascade), and a metered unit keeps the id
-- of the event it was counted for after the event is gone (billing outlives the conversation; ids
-- are never reused).
ALTER TABLE agent_event_revisions DROP CONSTRAINT agent_event_revisions_event_id_fkey;
ALTER TABLE agent_analysis_jobs DROP CONSTRAINT agent_analysis_jobs_event_id_fkey;
ALTER TABLE agent_signals DROP CONSTRAINT agent_signals_event_id_fkey;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_event_id_fkey;

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
-- `pending_*`: an extension planned and not yet attached (its window constraint added, maybe not yet
-- validated): the next run, or one starting meanwhile, finishes it instead of planning another.
CREATE TABLE agent_event_partition_window (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  low uuid NOT NULL,
  high uuid NOT NULL,
  legacy_ids uuid[] NOT NULL DEFAULT '{}',
  pending_high uuid,
  pending_legacy_ids uuid[],
  pending_constraint text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((pending_high IS NULL) = (pending_legacy_ids IS NULL) AND (pending_high IS NULL) = (pending_constraint IS NULL))
);
