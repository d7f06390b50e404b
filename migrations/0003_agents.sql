-- Agent chat ingestion: applications and their ingest credentials, sessions, participants, events
-- with their revision history, and the analysis jobs and signals the session workflow produces.

-- Spec: 404 "agent chats not enabled for the workspace".
ALTER TABLE organizations ADD COLUMN agent_chats_enabled boolean NOT NULL DEFAULT true;

CREATE TABLE agent_applications (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  agent_key text NOT NULL CHECK (agent_key ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  content_capture boolean NOT NULL DEFAULT true,
  redacted_field_names text[] NOT NULL DEFAULT '{}',
  redacted_text_patterns text[] NOT NULL DEFAULT '{}',
  -- null: no application-specific limit
  retention_days integer CHECK (retention_days BETWEEN 1 AND 3650),
  -- empty: every environment is accepted
  allowed_environments text[] NOT NULL DEFAULT '{}',
  access text NOT NULL DEFAULT 'workspace' CHECK (access IN ('workspace', 'users')),
  access_user_ids uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- a deleted application answers 404 to its still valid credentials; its conversations stay
  deleted_at timestamptz
);
CREATE UNIQUE INDEX agent_applications_key ON agent_applications (organization_id, agent_key) WHERE deleted_at IS NULL;

CREATE TABLE agent_credentials (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  application_id uuid NOT NULL REFERENCES agent_applications (id) ON DELETE CASCADE,
  display_prefix text NOT NULL,
  -- SHA-256 of the secret; the secret is shown once and never stored
  secret_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX agent_credentials_application_idx ON agent_credentials (application_id);

CREATE TABLE agent_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  application_id uuid NOT NULL REFERENCES agent_applications (id) ON DELETE CASCADE,
  external_session_id text NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'ended', 'abandoned')),
  processing_status text NOT NULL DEFAULT 'pending'
    CHECK (processing_status IN ('pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled')),
  agent_version text,
  source jsonb,
  context jsonb,
  event_count integer NOT NULL DEFAULT 0,
  highest_sequence bigint,
  -- advanced by the session workflow: every sequence up to it has been processed
  processed_through_sequence bigint,
  -- conversation access: null is workspace access; else the users who may read it (owners aside)
  restricted_to uuid[],
  content_purged_at timestamptz,
  ended_at timestamptz,
  last_ingest_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (application_id, external_session_id)
);
CREATE INDEX agent_sessions_organization_idx ON agent_sessions (organization_id, created_at, id);

CREATE TABLE agent_participants (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  -- 'ext:<externalId>', or 'anon:<hash>' for a participant sent without externalId
  participant_key text NOT NULL,
  external_id text,
  display_name text,
  username text,
  email text,
  person_id bigint REFERENCES people (id) ON DELETE SET NULL,
  company_external_id text,
  boundary text CHECK (boundary IN ('external', 'internal')),
  owner_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  properties jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_id, participant_key)
);
CREATE INDEX agent_participants_owner_idx ON agent_participants (owner_user_id) WHERE owner_user_id IS NOT NULL;

CREATE TABLE agent_events (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  external_event_id text NOT NULL,
  -- sequence and occurred_at are fixed when the event is first persisted (spec rule 7)
  sequence bigint NOT NULL CHECK (sequence >= 0),
  revision integer NOT NULL CHECK (revision >= 1),
  type text NOT NULL CHECK (type IN ('user_message', 'assistant_message', 'feedback')),
  occurred_at timestamptz NOT NULL,
  final boolean,
  -- SHA-256 of the sanitized content: retries compare by it, also when content capture is off
  content_hash bytea NOT NULL,
  -- the sanitized content (participant, content, model, usage, trace, feedback, context);
  -- null while content capture is off
  payload jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_id, sequence),
  UNIQUE (session_id, external_event_id)
);

-- Every content an event had before a revision replaced it, for audit.
CREATE TABLE agent_event_revisions (
  id bigserial PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES agent_events (id) ON DELETE CASCADE,
  revision integer NOT NULL,
  final boolean,
  content_hash bytea NOT NULL,
  payload jsonb,
  superseded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, revision)
);

-- Qualitative analysis queued for finalized assistant responses (the session workflow runs them).
CREATE TABLE agent_analysis_jobs (
  id bigserial PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  event_id bigint NOT NULL REFERENCES agent_events (id) ON DELETE CASCADE,
  revision integer NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'done', 'failed', 'superseded')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, revision)
);

CREATE TABLE agent_signals (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  session_id uuid NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  event_id bigint REFERENCES agent_events (id) ON DELETE CASCADE,
  event_external_id text NOT NULL,
  source text NOT NULL CHECK (source IN ('explicit_feedback', 'qualitative_inference')),
  kind text,
  rating text CHECK (rating IN ('positive', 'negative')),
  labels text[] NOT NULL DEFAULT '{}',
  comment text,
  summary text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_signals_session_idx ON agent_signals (session_id);
CREATE INDEX agent_signals_organization_idx ON agent_signals (organization_id, created_at, id);
