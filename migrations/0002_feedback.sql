-- Feedback area: companies and people (shared with the recordings and agent areas through the
-- person's public uuid), feedback sources and their records, and the shared rate-limit counters.

CREATE TABLE companies (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  domain text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX companies_organization_domain_key ON companies (organization_id, lower(domain));

CREATE TABLE people (
  id bigserial PRIMARY KEY,
  uuid uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL,
  first_name text,
  last_name text,
  boundary text NOT NULL DEFAULT 'external' CHECK (boundary IN ('external', 'internal')),
  company_id bigint REFERENCES companies (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX people_organization_email_key ON people (organization_id, lower(email));

CREATE TABLE feedback_sources (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('api')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX feedback_sources_organization_idx ON feedback_sources (organization_id, id);

CREATE TABLE feedback_records (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  feedback_source_id bigint NOT NULL REFERENCES feedback_sources (id) ON DELETE CASCADE,
  person_id bigint REFERENCES people (id) ON DELETE SET NULL,
  external_id text NOT NULL,
  display_ts timestamptz NOT NULL,
  fields jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- external_id is the integrator's dedupe key within a source: the constraint decides races.
CREATE UNIQUE INDEX feedback_records_source_external_key ON feedback_records (feedback_source_id, external_id);

-- Counters of rate-limiter-flexible's PostgreSQL store (its own layout), shared by every API replica.
CREATE TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
