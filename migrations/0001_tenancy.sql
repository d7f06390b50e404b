-- Tenancy and credentials: organizations own everything; users belong to one organization;
-- organization API keys and their scopes; the credit ledger.

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  recording_allowed boolean NOT NULL DEFAULT true,
  credit_balance bigint NOT NULL DEFAULT 0 CHECK (credit_balance >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every change of a balance, so that a balance can be explained and audited.
CREATE TABLE credit_transactions (
  id bigserial PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  amount bigint NOT NULL CHECK (amount <> 0),
  reason text NOT NULL,
  balance_after bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_transactions_organization_idx ON credit_transactions (organization_id, created_at);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (position('@' in email) > 1),
  first_name text,
  last_name text,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin')),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_organization_email_key ON users (organization_id, lower(email));

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text,
  -- the first characters of the key, safe to show, so that an operator can tell keys apart
  display_prefix text NOT NULL,
  -- SHA-256 of the whole key; the key itself is shown once and never stored
  key_hash bytea NOT NULL UNIQUE,
  scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id);
