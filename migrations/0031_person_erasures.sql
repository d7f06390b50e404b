-- Erasing a person (issue 32, point 2). The person's row stays as a tombstone (its identity
-- replaced, `erased_at` set), so that recordings' participants and sessions' participants keep
-- their counts. The erasure's job, written in the request's transaction, is also its audit record:
-- who erased which person and when, and what the erasure changed (counts). It keeps the erased
-- address only while `person-erasure/<id>` searches the organization's data for it, and clears it
-- when it finishes.
ALTER TABLE people ADD COLUMN erased_at timestamptz;

CREATE TABLE person_erasures (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  person_id bigint NOT NULL,
  person_uuid uuid NOT NULL,
  email text,
  -- `user:<id>`, `apiKey:<id>`, or `cli` (an operator).
  requested_by text NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  -- Rows changed (or deleted) per place, e.g. {"feedback_records": 2, "agent_events": 14}.
  counts jsonb NOT NULL DEFAULT '{}',
  CHECK (finished_at IS NULL OR email IS NULL)
);
CREATE INDEX person_erasures_organization_idx ON person_erasures (organization_id, requested_at);
CREATE INDEX person_erasures_unfinished_idx ON person_erasures (requested_at) WHERE finished_at IS NULL;
