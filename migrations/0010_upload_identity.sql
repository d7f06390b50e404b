-- An identical upload retry is the spec's identity (recording, fileName, fileSize, source
-- (in_mobile_app), folderId, batchId), whatever credential or browser Origin sends it. The tus
-- endpoint answers CORS for every Origin that created or retried the upload, not only the first.
ALTER TABLE media_ingestions ADD COLUMN cors_origins text[] NOT NULL DEFAULT '{}';
UPDATE media_ingestions SET cors_origins = ARRAY[origin] WHERE origin IS NOT NULL;
