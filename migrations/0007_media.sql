-- Media ingestion: one row per attempt to attach media to a recording (a URL transfer or a direct
-- upload), driven by the workflow `media-ingestion/<recordingId>`; the rendition it produced.

CREATE TABLE media_ingestions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  recording_id uuid NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('url', 'upload')),
  phase text NOT NULL DEFAULT 'waiting'
    CHECK (phase IN ('waiting', 'transferring', 'encoding', 'finalizing', 'ready', 'failed', 'cancelled')),
  encode_progress integer CHECK (encode_progress BETWEEN 0 AND 100),
  error_code text,
  bytes_received bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
-- Spec: at most one active media ingestion per recording (the workflow id is the other lock).
CREATE UNIQUE INDEX media_ingestions_active_key ON media_ingestions (recording_id)
  WHERE phase NOT IN ('ready', 'failed', 'cancelled');
CREATE INDEX media_ingestions_recording_idx ON media_ingestions (recording_id, created_at);

-- The playback rendition of a recording (its file under STORAGE_DIR/renditions/<recordingId>/).
ALTER TABLE recordings ADD COLUMN asset_rendition_file text;
ALTER TABLE recordings ADD COLUMN asset_content_type text;
ALTER TABLE recordings ADD COLUMN asset_duration_sec double precision;
