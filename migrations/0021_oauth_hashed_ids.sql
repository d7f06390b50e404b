-- Issue 29: tokens, codes and sessions of the authorization server are bearer credentials, and
-- their id is the credential. From now on they are stored under the SHA-256 (hex) of the id, with
-- no copy of it (`jti`) in the payload (src/oauth/adapter.ts, HASHED_MODELS); lookups hash the id
-- they are given. Rows stored before are rewritten the same way, so that issued tokens keep working.
UPDATE oauth_models
SET id = encode(sha256(convert_to(id, 'UTF8')), 'hex'), payload = payload - 'jti'
WHERE model IN ('AccessToken', 'AuthorizationCode', 'RefreshToken', 'ClientCredentials', 'InitialAccessToken', 'RegistrationAccessToken', 'Session');
