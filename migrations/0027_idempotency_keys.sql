-- Idempotency keys (issue 31, point 3): the first response to a POST sent with an `Idempotency-Key`
-- header, replayed for 24 hours to a retry with the same key, credential and request
-- (docs/guides/idempotency.md, decision 0181).
--
-- A row is claimed `in_progress` in its own short transaction before the handler runs, so that a
-- concurrent duplicate finds it and waits; `locked_until` bounds the claim, so that the key of a
-- process that died mid-request can be retried once it passes. The retention sweep deletes rows
-- past 24 hours.
CREATE TABLE idempotency_keys (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- The credential within the organization: `apiKey:<id>` or `user:<id>`.
  credential text NOT NULL,
  idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
  -- SHA-256 of the canonical request (method, path, body with sorted keys).
  request_hash bytea NOT NULL,
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  -- Each claim's own token: a request whose claim was taken over (its lock passed) cannot complete
  -- or release the claim of the request that took it.
  claim uuid NOT NULL,
  locked_until timestamptz,
  -- The stored response (completed only): status, the headers that matter, the JSON body as sent.
  response_status integer,
  response_headers jsonb,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((state = 'in_progress' AND locked_until IS NOT NULL) OR (state = 'completed' AND response_status IS NOT NULL))
);
CREATE UNIQUE INDEX idempotency_keys_scope_key ON idempotency_keys (organization_id, credential, idempotency_key);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
