-- Meeting joins: a recording made by a recorder bot, driven by `meeting-join/<organizationId>/<identity>`.
-- The join URL is not stored (it may carry a passcode); the workflow's input has it.
CREATE TABLE meeting_joins (
  recording_id uuid PRIMARY KEY REFERENCES recordings (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  platform text NOT NULL CHECK (platform IN ('zoom', 'google_meet', 'microsoft_teams', 'webex')),
  meeting_identity text NOT NULL,
  recorder text NOT NULL,
  bot_id text,
  bot_state text NOT NULL DEFAULT 'creating'
    CHECK (bot_state IN ('creating', 'joining', 'waiting_room', 'in_call', 'recording', 'done', 'failed')),
  bot_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX meeting_joins_identity_idx ON meeting_joins (organization_id, meeting_identity, created_at);
