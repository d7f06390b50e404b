/**
 * Recordings: p50/p99 of creating a recording with a 10,000-utterance transcript, of reading that
 * transcript as utterances and as monologues, and of listing with recorded_at filters when the
 * organization holds 100,000 recordings (seeded in SQL, each with its canonical record and a value).
 */
import { pino } from 'pino';
import { sql } from 'slonik';
import { REDACTED_PATHS } from '../src/logger.js';
import { createDatabasePool } from '../src/db/pool.js';
import { recordingsSourceId } from '../src/db/repositories/metadata.js';
import { createField } from '../src/recordings/catalog.js';
import { startTestApi } from '../harness/app.js';
import { testConfig } from '../harness/config.js';
import { createTestOrg } from '../harness/fixtures.js';
import { createTestDatabase, stopTestStack } from '../harness/stack.js';
import { load } from './stats.js';
import { installQuietRuntime } from './runtime.js';

const UTTERANCES = 10_000;
const RECORDINGS = 100_000;
const CREATES = 30;
const READS = 60;
const LISTS = 400;

const transcript = Array.from({ length: UTTERANCES }, (_, i) => ({
  startSec: i * 3,
  endSec: i * 3 + 2.5,
  speaker: Math.floor(i / 3) % 4,
  text: `Utterance ${i}: we talked about the renewal, the onboarding plan and the pricing of the next tier.`,
}));

export async function benchRecordings(): Promise<Record<string, unknown>> {
  installQuietRuntime();
  const databaseUrl = await createTestDatabase();
  const pool = await createDatabasePool(databaseUrl, { poolSize: 8 });
  const logger = pino({ level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, pino.destination('/dev/null'));
  const api = await startTestApi({ pool, config: testConfig(), logger });
  try {
    const org = await createTestOrg(pool);
    const headers = { 'X-Service-Api-Key': org.apiKey };
    const expect = (status: number) => (res: { status: number; body: unknown }) => {
      if (res.status !== status) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      return res;
    };
    const ids: string[] = [];
    const create = async (i: number) => {
      const res = expect(201)(
        await api.request('/v3/rest/recordings', {
          method: 'POST',
          headers,
          json: { record: { externalId: `big-${i}` }, transcript: { utterances: transcript } },
        }),
      );
      ids.push((res.body as { id: string }).id);
    };
    const created = await load(CREATES, 2, create);
    const read = (type: string) => async (i: number) => {
      expect(200)(await api.request(`/v3/rest/recordings/${ids[i % ids.length]}/transcript?type=${type}`, { headers }));
    };
    const utterances = await load(READS, 2, read('utterance'));
    const monologues = await load(READS, 2, read('monologue'));

    const seedStarted = performance.now();
    await seed(pool, org.organizationId);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const day = 24 * 3600 * 1000;
    const base = Date.UTC(2025, 0, 1);
    const list = async (i: number) => {
      const from = new Date(base + (i % 300) * day).toISOString();
      const to = new Date(base + ((i % 300) + 30) * day).toISOString();
      const page = 1 + (i % 5);
      expect(200)(await api.request(`/v3/rest/recordings?recorded_at_gte=${from}&recorded_at_lt=${to}&limit=50&page=${page}`, { headers }));
    };
    await load(40, 4, list);
    const listed = await load(LISTS, 4, list);
    return {
      benchmark: 'recordings',
      measuredAt: new Date().toISOString(),
      setup: {
        utterancesPerTranscript: UTTERANCES,
        transcriptJsonBytes: Buffer.byteLength(JSON.stringify(transcript)),
        creates: CREATES,
        reads: READS,
        recordingsInOrganization: RECORDINGS + CREATES,
        listRequests: LISTS,
        listPageSize: 50,
        seedSeconds: Number(seedSeconds.toFixed(1)),
      },
      createWith10kUtterances: created,
      getTranscriptUtterances: utterances,
      getTranscriptMonologues: monologues,
      listWithRecordedAtFilters: listed,
    };
  } finally {
    await api.close();
    await pool.end();
    await stopTestStack();
  }
}

/** 100,000 recordings over 2025 and 2026, each with its canonical record and one value. */
async function seed(pool: Awaited<ReturnType<typeof createDatabasePool>>, organizationId: string) {
  const field = await createField(pool, organizationId, { name: 'region', type: 'string' });
  const sourceId = await recordingsSourceId(pool, organizationId);
  await pool.query(sql.unsafe`
    WITH r AS (
      INSERT INTO recordings (organization_id, name, recorded_at)
      SELECT ${organizationId}, 'Seeded call ' || g, timestamptz '2025-01-01' + (g * interval '5 minutes') FROM generate_series(1, ${RECORDINGS}) g
      RETURNING id, name
    ), m AS (
      INSERT INTO metadata_records (organization_id, source_id, external_id, recording_id)
      SELECT ${organizationId}, ${sourceId}, 'seed-' || r.name, r.id FROM r
      RETURNING id
    )
    INSERT INTO metadata_values (record_id, field_id, position, value) SELECT m.id, ${field.id}, 0, '"emea"'::jsonb FROM m`);
  await pool.query(sql.unsafe`ANALYZE recordings, metadata_records, metadata_values`);
}
