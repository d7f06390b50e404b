-- Sign-in with e-mail and password (issue 20: the MCP authorization server's login form).
-- argon2id PHC strings (src/auth/passwords.ts); null: the user cannot sign in with a password.
ALTER TABLE users ADD COLUMN password_hash text;
ALTER TABLE users ADD COLUMN password_changed_at timestamptz;
-- An e-mail address signs in to one account: among users with a password it is unique across
-- organizations (the same address may still be a user without a password elsewhere).
CREATE UNIQUE INDEX users_sign_in_email_key ON users (lower(email)) WHERE password_hash IS NOT NULL;
