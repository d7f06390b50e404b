-- MCP coding-agent session tools: projects, uploaded coding-agent sessions and their associations.

CREATE TABLE projects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- the id clients see (`publicId`); the primary key never leaves the service
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  description text CHECK (length(description) <= 5000),
  created_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_organization_idx ON projects (organization_id, created_at);

CREATE TABLE coding_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  uploaded_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  title text,
  format text NOT NULL CHECK (format IN ('normalized', 'claude-code', 'codex')),
  event_count integer NOT NULL,
  -- SHA-256 of the uploaded file: the same file uploaded again is the same session
  content_hash bytea NOT NULL,
  -- visible user and assistant messages, secrets masked
  events jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, content_hash)
);

CREATE TABLE project_sessions (
  project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  session_id uuid NOT NULL REFERENCES coding_sessions (id) ON DELETE CASCADE,
  associated_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  -- millisecond precision: the API shows milliseconds, and list cursors carry this value exactly
  associated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, session_id)
);
CREATE INDEX project_sessions_session_idx ON project_sessions (session_id);
