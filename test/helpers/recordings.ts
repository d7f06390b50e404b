import type { DatabasePool } from 'slonik';
import { createField, createFolder } from '../../src/recordings/catalog.js';
import type { FieldType } from '../../src/domain/feedback-fields.js';
import type { TestApi } from '../../harness/app.js';
import { feedbackContext } from './feedback.js';
import type { TestOrg } from '../../harness/fixtures.js';

let counter = 0;

export interface RecordingContext {
  databaseUrl: string;
  pool: DatabasePool;
  api: TestApi;
  org: TestOrg;
  other: TestOrg;
  /** A request with `org`'s API key (or the given headers). */
  call(method: string, path: string, json?: unknown, headers?: Record<string, string>): ReturnType<TestApi['request']>;
  field(type: FieldType, org?: TestOrg): Promise<string>;
  folder(org?: TestOrg): Promise<string>;
  close(): Promise<void>;
}

/** The feedback context's database, app and two organizations, with recordings helpers. */
export async function recordingContext(env: Record<string, string> = {}): Promise<RecordingContext> {
  const base = await feedbackContext({ FEEDBACK_RATE_LIMIT_PER_MINUTE: '0', ...env });
  const { pool, api, org } = base;
  return {
    ...base,
    call: (method, path, json, headers = { 'X-Service-Api-Key': org.apiKey }) => api.request(path, { method, headers, json }),
    field: async (type, owner = org) => (await createField(pool, owner.organizationId, { name: `field_${++counter}`, type })).id,
    folder: async (owner = org) => (await createFolder(pool, owner.organizationId, `Folder ${++counter}`)).id,
  };
}

/** `n` ordered utterances alternating between speakers 0 and 1, each one second long. */
export function utterances(n: number, text = (i: number) => `Sentence number ${i}.`) {
  return Array.from({ length: n }, (_, i) => ({ startSec: i, endSec: i + 1, speaker: i % 2, text: text(i) }));
}

export const uniqueExternalId = () => `rec-${++counter}-${Date.now()}`;
