-- `intake token revoke --token <tokenId>`: the id `token issue` prints revokes its token without the
-- token itself. Tokens are not stored when issued, so such a row knows neither the user nor the
-- expiry: it names no user and lasts the longest lifetime a token can have (31 days).
ALTER TABLE revoked_tokens ALTER COLUMN user_id DROP NOT NULL;
