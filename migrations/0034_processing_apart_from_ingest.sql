-- The data path, third pass (issue 52, decision 0210): a processing pass no longer holds the
-- session's row while it works, and events are append-only.

-- The wake's generation: every ingest that requests a wake adds one, under the session's row lock.
-- A pass reads it when it claims the session, without locking the row, and takes the wake only if
-- it has not moved since: an ingest committed meanwhile keeps the wake requested.
ALTER TABLE agent_sessions ADD COLUMN wake_seq bigint NOT NULL DEFAULT 0;

-- Processed state is the session's watermark: an event above it is pending; one at or below it is
-- processed, unless `processed_revision` says otherwise. `processed_revision` is NULL for an event
-- no pass has had to mark (the common case: inserted once, never updated). It is set when the
-- event's content is revised (to the revision before, by the ingest: the new one is pending) and
-- when a feedback event arrives below the session's highest sequence (to 0, by the trigger below:
-- an ended session's pass may already have passed its place); a pass that processes such an event
-- sets it to the revision it processed.
--
-- Until now a NULL meant "never processed": those at or below the watermark (late feedback no pass
-- took yet) keep that meaning.
UPDATE agent_events e SET processed_revision = 0
FROM agent_sessions s
WHERE e.session_id = s.id AND e.processed_revision IS NULL AND e.sequence <= s.processed_through_sequence;

DROP INDEX agent_events_unprocessed_idx;
CREATE INDEX agent_events_unprocessed_idx ON agent_events (session_id, sequence) WHERE processed_revision <> revision;

-- Feedback may arrive in an ended session at a sequence below events already stored, where a pass
-- may have moved the watermark past its place: it is marked pending explicitly. Only feedback can
-- (an open session's watermark never passes a missing sequence, and an ended one takes no new
-- messages). Compared with the highest sequence before the inserting statement, read under the
-- ingest's session lock. A trigger rather than the ingest's statement: a 0.1 API replica running
-- beside this version during a rolling upgrade marks its feedback too.
CREATE FUNCTION agent_events_mark_late_feedback() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.sequence < (SELECT highest_sequence FROM agent_sessions WHERE id = NEW.session_id) THEN
    NEW.processed_revision := 0;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER agent_events_late_feedback BEFORE INSERT ON agent_events
  FOR EACH ROW WHEN (NEW.type = 'feedback' AND NEW.processed_revision IS NULL)
  EXECUTE FUNCTION agent_events_mark_late_feedback();
