-- Direct uploads (tus): what the request declared, for the identical-retry rule and for the tus
-- endpoint's checks (size, Origin for CORS, deadline). The upload id is the ingestion id.

-- Upload batches are user-scoped (spec): an organization API key cannot attach an upload to one.
CREATE TABLE upload_batches (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_batches_user_idx ON upload_batches (user_id);

ALTER TABLE media_ingestions
  ADD COLUMN file_name text,
  ADD COLUMN file_size bigint CHECK (file_size BETWEEN 1 AND 9007199254740991),
  ADD COLUMN folder_id uuid REFERENCES folders (id) ON DELETE SET NULL,
  ADD COLUMN batch_id uuid REFERENCES upload_batches (id) ON DELETE SET NULL,
  ADD COLUMN in_mobile_app boolean NOT NULL DEFAULT false,
  -- Who created it ('apiKey:<id>' or 'user:<id>'): part of the identical-retry rule.
  ADD COLUMN created_by text,
  -- The browser Origin the tus endpoint answers CORS requests for (user requests).
  ADD COLUMN origin text,
  ADD COLUMN timeout_seconds integer CHECK (timeout_seconds > 0),
  -- The first and latest byte received through the tus endpoint.
  ADD COLUMN began_at timestamptz,
  ADD COLUMN last_byte_at timestamptz;

ALTER TABLE media_ingestions ADD CONSTRAINT media_ingestions_upload_fields CHECK (
  kind <> 'upload' OR (file_name IS NOT NULL AND file_size IS NOT NULL AND created_by IS NOT NULL AND timeout_seconds IS NOT NULL));
