-- Status that tells why (issue 31, point 4): while a media ingestion's step or a meeting bot's status
-- read is being retried, its last failure (a catalogued code, never the raw error), the attempt that
-- failed and when the next one starts. Written by the worker before it rethrows; cleared when the
-- work succeeds or ends. REST reads these columns and never asks Temporal.

ALTER TABLE media_ingestions
  ADD COLUMN retry_error_code text,
  -- From the catalogue (src/domain/failure-messages.ts), never the error's own text.
  ADD COLUMN retry_message text,
  ADD COLUMN retry_attempt integer,
  ADD COLUMN retry_next_attempt_at timestamptz;

ALTER TABLE meeting_joins
  ADD COLUMN retry_error_code text,
  ADD COLUMN retry_message text,
  ADD COLUMN retry_attempt integer,
  ADD COLUMN retry_next_attempt_at timestamptz,
  -- When the bot entered its current state (updated_at moves on every status read).
  ADD COLUMN bot_state_since timestamptz;

UPDATE meeting_joins SET bot_state_since = updated_at;
ALTER TABLE meeting_joins ALTER COLUMN bot_state_since SET DEFAULT now(), ALTER COLUMN bot_state_since SET NOT NULL;
