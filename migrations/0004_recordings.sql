-- Recordings: the organization's metadata sources and typed fields, folders, recordings with their
-- canonical metadata record and values, folder links, participants (speaker to person) and the
-- transcript's utterances.

CREATE TABLE metadata_sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  type text NOT NULL,
  external_entity_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, type, external_entity_name)
);

CREATE TABLE metadata_fields (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES metadata_sources (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  type text NOT NULL CHECK (type IN ('boolean', 'date', 'datetime', 'float', 'integer', 'json', 'string')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX metadata_fields_source_name_key ON metadata_fields (source_id, lower(name));
CREATE INDEX metadata_fields_organization_idx ON metadata_fields (organization_id, created_at, id);

CREATE TABLE folders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX folders_organization_idx ON folders (organization_id, created_at, id);

CREATE TABLE recordings (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT 'Untitled recording' CHECK (length(name) BETWEEN 1 AND 500),
  -- where the recording came from: 'api' (created through REST); later 'meeting' (recorder bot)
  source text NOT NULL DEFAULT 'api',
  recorded_at timestamptz NOT NULL DEFAULT now(),
  asset_status text NOT NULL DEFAULT 'waiting'
    CHECK (asset_status IN ('waiting', 'queued', 'uploading', 'processing', 'completed', 'failed', 'cancelled')),
  asset_error_code text,
  -- the URL media is fetched from (never shown: it may carry signed query parameters)
  asset_source_url text,
  transcript_status text NOT NULL DEFAULT 'waiting' CHECK (transcript_status IN ('waiting', 'processing', 'completed', 'failed', 'unavailable')),
  transcript_source text CHECK (transcript_source IN ('api', 'automatic')),
  created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_by_api_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- The list: newest recorded first, filtered by recorded_at ranges.
CREATE INDEX recordings_organization_recorded_idx ON recordings (organization_id, recorded_at DESC, id DESC);

CREATE TABLE metadata_records (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES metadata_sources (id) ON DELETE CASCADE,
  external_id text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 512),
  recording_id uuid REFERENCES recordings (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- spec: an external id is used once per source; this constraint decides racing creates
  UNIQUE (source_id, external_id)
);
CREATE INDEX metadata_records_recording_idx ON metadata_records (recording_id);

CREATE TABLE metadata_values (
  record_id uuid NOT NULL REFERENCES metadata_records (id) ON DELETE CASCADE,
  field_id uuid NOT NULL REFERENCES metadata_fields (id) ON DELETE CASCADE,
  position integer NOT NULL,
  value jsonb NOT NULL,
  PRIMARY KEY (record_id, field_id)
);

CREATE TABLE recording_folders (
  recording_id uuid NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
  folder_id uuid NOT NULL REFERENCES folders (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (recording_id, folder_id)
);
CREATE INDEX recording_folders_folder_idx ON recording_folders (folder_id);

CREATE TABLE recording_participants (
  recording_id uuid NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
  speaker integer NOT NULL CHECK (speaker >= 0),
  person_id bigint NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  PRIMARY KEY (recording_id, speaker),
  UNIQUE (recording_id, person_id)
);

CREATE TABLE transcript_utterances (
  recording_id uuid NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
  position integer NOT NULL,
  start_sec double precision NOT NULL CHECK (start_sec >= 0),
  end_sec double precision NOT NULL,
  speaker integer NOT NULL CHECK (speaker >= 0),
  text text NOT NULL,
  PRIMARY KEY (recording_id, position),
  CHECK (end_sec >= start_sec)
);
