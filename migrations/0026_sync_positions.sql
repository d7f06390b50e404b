-- Incremental sync (issue 31, point 2; decisions 0179, 0180). Signals, agent sessions and
-- recordings carry the position of their latest change: the id of the transaction that wrote it
-- (xid8, top-level even inside a savepoint) and a sequence value, stamped by a trigger on INSERT
-- and on the UPDATEs that change what the API shows. A reader pages by (change_xid, change_seq)
-- and serves only rows whose change_xid is below its snapshot's xmin: every transaction below it
-- has finished, so no row can later appear behind a cursor (a bare sequence would allow that: its
-- values are taken before commit, and transactions commit out of order).
-- The sequence only orders the rows of one transaction (one backend), so values cached per
-- backend are fine: they are unique, and monotonic within a backend.
CREATE SEQUENCE sync_change_seq CACHE 64;

-- clock_timestamp(): the moment of the write, not of the transaction's start, so that
-- `updatedSince` misses as little as possible of a transaction that began before it.
CREATE FUNCTION sync_position_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.change_xid := pg_current_xact_id();
  NEW.change_seq := nextval('sync_change_seq');
  NEW.changed_at := clock_timestamp();
  RETURN NEW;
END
$$;

ALTER TABLE agent_signals ADD COLUMN change_xid xid8, ADD COLUMN change_seq bigint, ADD COLUMN changed_at timestamptz;
ALTER TABLE agent_sessions ADD COLUMN change_xid xid8, ADD COLUMN change_seq bigint, ADD COLUMN changed_at timestamptz;
ALTER TABLE recordings ADD COLUMN change_xid xid8, ADD COLUMN change_seq bigint, ADD COLUMN changed_at timestamptz;

-- Existing rows: this migration's transaction wrote them, in no particular order among themselves.
UPDATE agent_signals SET change_xid = pg_current_xact_id(), change_seq = nextval('sync_change_seq'), changed_at = created_at;
UPDATE agent_sessions SET change_xid = pg_current_xact_id(), change_seq = nextval('sync_change_seq'), changed_at = updated_at;
UPDATE recordings SET change_xid = pg_current_xact_id(), change_seq = nextval('sync_change_seq'), changed_at = updated_at;

ALTER TABLE agent_signals ALTER COLUMN change_xid SET NOT NULL, ALTER COLUMN change_seq SET NOT NULL, ALTER COLUMN changed_at SET NOT NULL;
ALTER TABLE agent_sessions ALTER COLUMN change_xid SET NOT NULL, ALTER COLUMN change_seq SET NOT NULL, ALTER COLUMN changed_at SET NOT NULL;
ALTER TABLE recordings ALTER COLUMN change_xid SET NOT NULL, ALTER COLUMN change_seq SET NOT NULL, ALTER COLUMN changed_at SET NOT NULL;

-- The keyset (a page is an index range scan from the cursor) and `updatedSince`'s first page.
CREATE INDEX agent_signals_sync_idx ON agent_signals (organization_id, change_xid, change_seq);
CREATE INDEX agent_signals_changed_at_idx ON agent_signals (organization_id, changed_at);
CREATE INDEX agent_sessions_sync_idx ON agent_sessions (organization_id, change_xid, change_seq);
CREATE INDEX agent_sessions_changed_at_idx ON agent_sessions (organization_id, changed_at);
CREATE INDEX recordings_sync_idx ON recordings (organization_id, change_xid, change_seq);
CREATE INDEX recordings_changed_at_idx ON recordings (organization_id, changed_at);

CREATE TRIGGER agent_signals_sync_insert BEFORE INSERT ON agent_signals FOR EACH ROW EXECUTE FUNCTION sync_position_stamp();
CREATE TRIGGER agent_signals_sync_update BEFORE UPDATE ON agent_signals FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION sync_position_stamp();

CREATE TRIGGER recordings_sync_insert BEFORE INSERT ON recordings FOR EACH ROW EXECUTE FUNCTION sync_position_stamp();
CREATE TRIGGER recordings_sync_update BEFORE UPDATE ON recordings FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION sync_position_stamp();

-- Sessions are updated all the time by the wake/hold protocol (wake_requested_at,
-- workflow_signalled_at, hold_signalled_at, wake_trace_parent, last_ingest_at), which the API does
-- not show: only a change of a shown column (or of the access list) moves a session.
CREATE TRIGGER agent_sessions_sync_insert BEFORE INSERT ON agent_sessions FOR EACH ROW EXECUTE FUNCTION sync_position_stamp();
CREATE TRIGGER agent_sessions_sync_update BEFORE UPDATE ON agent_sessions FOR EACH ROW
  WHEN ((OLD.application_id, OLD.external_session_id, OLD.status, OLD.processing_status, OLD.agent_version, OLD.source, OLD.context,
      OLD.event_count, OLD.highest_sequence, OLD.processed_through_sequence, OLD.restricted_to, OLD.content_purged_at, OLD.ended_at,
      OLD.updated_at)
    IS DISTINCT FROM (NEW.application_id, NEW.external_session_id, NEW.status, NEW.processing_status, NEW.agent_version, NEW.source,
      NEW.context, NEW.event_count, NEW.highest_sequence, NEW.processed_through_sequence, NEW.restricted_to, NEW.content_purged_at,
      NEW.ended_at, NEW.updated_at))
  EXECUTE FUNCTION sync_position_stamp();
