-- Issue 29: anyone may register an OAuth client, so a client no user approved expires a day after
-- its registration (src/oauth/adapter.ts), and one that was approved lives as long as its longest
-- grant; the retention sweep purges expired rows. Clients registered before this had no expiry:
-- they get the same rule, counted from now.
UPDATE oauth_models c
SET expires_at = CASE
  WHEN EXISTS (SELECT 1 FROM oauth_models g WHERE g.model = 'Grant' AND g.payload ->> 'clientId' = c.id AND g.expires_at IS NULL) THEN NULL
  ELSE greatest(now() + interval '24 hours', (SELECT max(g.expires_at) FROM oauth_models g WHERE g.model = 'Grant' AND g.payload ->> 'clientId' = c.id))
END
WHERE c.model = 'Client' AND c.expires_at IS NULL;
