-- Issue 20: a user's grants, listed and revoked by `intake grant list|revoke`, and sign-in
-- sessions, ended with every token (`token revoke --user`), are found by their account; and the
-- identities of upstream OpenID Connect sign-in.
CREATE INDEX oauth_models_grant_account_idx ON oauth_models ((payload ->> 'accountId')) WHERE model = 'Grant';
CREATE INDEX oauth_models_session_account_idx ON oauth_models ((payload ->> 'accountId')) WHERE model = 'Session';

-- One row per identity at an upstream identity provider (its issuer and subject) that signs in as an
-- Intake user. Made at the first sign-in, by the identity's verified e-mail address; afterwards the
-- subject alone decides, so that a changed address at the provider does not move the account.
CREATE TABLE user_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user_id_idx ON user_identities (user_id);
