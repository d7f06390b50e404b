-- The MCP authorization server's state (issue 20; oidc-provider's adapter, src/oauth/adapter.ts):
-- registered clients, sessions, interactions, grants, authorization codes, access and refresh
-- tokens, one row each, keyed by model name and id. The payload is oidc-provider's; the columns
-- beside it are what the adapter looks rows up by.
CREATE TABLE oauth_models (
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text GENERATED ALWAYS AS (payload ->> 'grantId') STORED,
  uid text GENERATED ALWAYS AS (payload ->> 'uid') STORED,
  user_code text GENERATED ALWAYS AS (payload ->> 'userCode') STORED,
  -- Null: kept until destroyed (registered clients).
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id)
);
CREATE INDEX oauth_models_grant_id_idx ON oauth_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_models_uid_idx ON oauth_models (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_models_user_code_idx ON oauth_models (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_models_expires_at_idx ON oauth_models (expires_at) WHERE expires_at IS NOT NULL;
