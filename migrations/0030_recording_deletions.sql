-- Deleting a recording (issue 32, point 1): the recording's rows go in the request's transaction,
-- and this job row, written in the same transaction, lists what the rows cannot take with them:
-- its media's objects in the store (`incoming/<ingestionId>`, direct uploads, `renditions/<id>/`),
-- its running workflows and its recorder bot. `recording-deletion/<recordingId>` works through it
-- and sets finished_at; the media reconciler starts the workflow of a job left without one.
-- No foreign keys: the recording is gone when the job runs, and the job outlives it.
CREATE TABLE recording_deletions (
  recording_id uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  ingestion_ids uuid[] NOT NULL DEFAULT '{}',
  -- The meeting-join workflow that made the recording (its id holds a keyed hash, not the meeting).
  meeting_workflow_id text,
  bot_id text,
  requested_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX recording_deletions_unfinished_idx ON recording_deletions (requested_at) WHERE finished_at IS NULL;
