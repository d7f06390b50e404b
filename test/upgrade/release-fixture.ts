/** What `make-release-fixture.ts` keeps of a release besides its database dump and media. */
export interface ReleaseFixture {
  version: string;
  /** The release's commit. */
  commit: string;
  /** The organization's API key, as the release's CLI printed it. */
  apiKey: string;
  ids: ReleaseIds;
  /** The release's answer to each of `releaseReads`, by path. */
  reads: Record<string, unknown>;
}

export interface ReleaseIds {
  organizationId: string;
  sourceId: string;
  recordId: string;
  personEmail: string;
  transcribedId: string;
  uploadedId: string;
  uploadId: string | null;
  sessionId: string;
  applicationId: string;
  fieldId: string;
  folderId: string;
}

/** Every read the upgrade test repeats on the migrated database (API key reads of each area). */
export function releaseReads(ids: ReleaseIds): string[] {
  return [
    '/v3/rest/organization',
    '/v3/rest/feedback-sources',
    `/v3/rest/feedback-sources/${ids.sourceId}`,
    `/v3/rest/feedback-sources/${ids.sourceId}/records`,
    `/v3/rest/feedback-sources/${ids.sourceId}/records/${ids.recordId}`,
    `/v3/rest/people?email=${encodeURIComponent(ids.personEmail)}`,
    '/v3/rest/recordings',
    `/v3/rest/recordings/${ids.transcribedId}`,
    `/v3/rest/recordings/${ids.transcribedId}/transcript`,
    `/v3/rest/recordings/${ids.transcribedId}/transcript?type=monologue`,
    `/v3/rest/recordings/${ids.uploadedId}`,
    '/v3/rest/agent-conversations/sessions',
    `/v3/rest/agent-conversations/sessions/${ids.sessionId}`,
    '/v3/rest/signals',
    '/v3/rest/usage?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z',
    '/v3/rest/folders',
    '/v3/rest/metadata-fields',
  ];
}
