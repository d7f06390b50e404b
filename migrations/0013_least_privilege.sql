-- Who may do what (issue 18).
-- Feedback reads get their own scope. Keys that could write feedback could read it before, and
-- keep that; keys without feedback:write lose feedback reads.
UPDATE api_keys SET scopes = array_append(scopes, 'feedback:read')
WHERE 'feedback:write' = ANY (scopes) AND NOT 'feedback:read' = ANY (scopes);

-- User access tokens can be revoked one by one (by their jti) or all at once (a user's token
-- version: tokens carry the version they were issued under, and a revocation increments it).
ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;
CREATE TABLE revoked_tokens (
  jti uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- After this the token is refused for its expiry anyway, and the row can go.
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revoked_tokens_expires_at_idx ON revoked_tokens (expires_at);
