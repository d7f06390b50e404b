import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../../src/db/pool.js';
import { LocalRecorder, RecorderError, type Recorder } from '../../../src/providers/recorder/index.js';
import { meetingJoinIdFor } from '../../../src/recordings/meeting-joins.js';
import type { MeetingJoinResult } from '../../../workflows/meeting-join/contract.js';
import { startTestApi, type TestApi } from '../../../harness/app.js';
import { TEST_SIGNING_SECRET, testConfig } from '../../../harness/config.js';
import { createTestOrg, createTestUser, type TestOrg } from '../../../harness/fixtures.js';
import { createTestDatabase } from '../../../harness/stack.js';
import { LOOPBACK_POLICY, startTestWorker, type TestWorker } from '../../../harness/worker.js';
import { waitFor } from '../../../harness/wait.js';

interface MeetingJoin {
  recordingId: string;
  platform: string;
  botState: string;
  botStateSince: string;
  reason: string | null;
  retry?: { errorCode: string; message: string; attempt: number; nextAttemptAt: string };
  createdAt: string;
  updatedAt: string;
}

const ORDER = ['creating', 'joining', 'waiting_room', 'in_call', 'recording', 'done'];

/** Issue 31, point 4: a meeting join's bot state over REST (GET /v3/rest/recordings/{id}/meeting-join), from PostgreSQL. */
describe('meeting joins: the bot state over REST', function () {
  this.timeout(120_000);
  let dir: string;
  let pool: DatabasePool;
  let worker: TestWorker;
  let api: TestApi;
  let org: TestOrg;
  let user: { accessToken: string };
  // The recorder provider's status reads fail (retryably) while this is set.
  let providerDown = false;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-meeting-status-'));
    pool = await createDatabasePool(await createTestDatabase());
    const local = new LocalRecorder({ dir: path.join(dir, 'recorder'), meetingSeconds: 3 });
    const recorder: Recorder = {
      name: 'local',
      createBot: (meeting, options) => local.createBot(meeting, options),
      botStatus: async (botId) => {
        if (providerDown) throw new RecorderError('HTTP 503 from recorder.internal.example:8443', 'provider_unavailable', true);
        return local.botStatus(botId);
      },
      leave: (botId) => local.leave(botId),
    };
    worker = await startTestWorker(pool, {
      deps: { mediaDir: dir, resolver: async () => [{ address: '127.0.0.1', family: 4 }], addressPolicy: LOOPBACK_POLICY, recorder },
    });
    api = await startTestApi({
      pool,
      config: testConfig({ STORAGE_DIR: dir, MEETING_STATUS_POLL_SECONDS: '1', TEMPORAL_TASK_QUEUE: worker.taskQueue }),
    });
    org = await createTestOrg(pool);
    user = await createTestUser(pool, org.organizationId);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
    await pool?.end();
    await rm(dir, { recursive: true, force: true });
  });

  const join = async (code: string): Promise<string> => {
    const res = await api.request('/v3/rest/recordings/meeting-joins', {
      method: 'POST',
      headers: { Authorization: `Bearer ${user.accessToken}` },
      json: { type: 'meetingUrl', joinUrl: `https://meet.google.com/${code}` },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.recordingId as string;
  };
  const status = (recordingId: string, headers: Record<string, string> = { 'X-Service-Api-Key': org.apiKey }) =>
    api.request(`/v3/rest/recordings/${recordingId}/meeting-join`, { headers });
  const ended = (code: string) =>
    api.temporal.client.workflow
      .getHandle(meetingJoinIdFor(TEST_SIGNING_SECRET, org.organizationId, `google_meet:${code}`))
      .result() as Promise<MeetingJoinResult>;
  const code = () => {
    const letters = randomUUID()
      .replace(/[^a-f]/g, '')
      .padEnd(10, 'a');
    return `${letters.slice(0, 3)}-${letters.slice(3, 7)}-${letters.slice(7, 10)}`;
  };

  it('goes through its states, each with the time it began, to done (API key or user)', async () => {
    const meeting = code();
    const recordingId = await join(meeting);
    const seen: MeetingJoin[] = [];
    await waitFor(
      async () => {
        const res = await status(recordingId);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const body = res.body as MeetingJoin;
        if (seen.at(-1)?.botState !== body.botState) seen.push(body);
        return body.botState === 'done';
      },
      60_000,
      100,
    );
    const states = seen.map((s) => s.botState);
    assert.equal(states.at(-1), 'done', states.join(' → '));
    assert.ok(states.includes('recording') || states.includes('in_call'), states.join(' → '));
    // Only forward, each state once, and each began later than the one before.
    assert.deepEqual(
      states,
      ORDER.filter((s) => states.includes(s)),
    );
    for (let i = 1; i < seen.length; i++) assert.ok(Date.parse(seen[i]!.botStateSince) > Date.parse(seen[i - 1]!.botStateSince));
    const last = seen.at(-1)!;
    assert.deepEqual(
      [last.recordingId, last.platform, last.reason, last.retry, Date.parse(last.createdAt) <= Date.parse(last.updatedAt)],
      [recordingId, 'google_meet', null, undefined, true],
    );
    assert.deepEqual(await ended(meeting), { state: 'done', reason: null });
    const byUser = await status(recordingId, { Authorization: `Bearer ${user.accessToken}` });
    assert.deepEqual([byUser.status, byUser.body.botState], [200, 'done']);
  });

  it('while the recorder provider fails: the retry (catalogued code and message, attempt, next attempt); gone once it answers', async () => {
    providerDown = true;
    const meeting = code();
    let recordingId: string;
    try {
      recordingId = await join(meeting);
      let body: MeetingJoin | undefined;
      const shown = await waitFor(async () => (body = (await status(recordingId)).body as MeetingJoin).retry !== undefined, 30_000, 100);
      assert.ok(shown, JSON.stringify(body));
      const retry = body!.retry!;
      assert.equal(body!.botState, 'joining', 'the state the bot was last seen in');
      assert.deepEqual(
        [retry.errorCode, retry.message, retry.attempt],
        ['provider_unavailable', 'The provider is unavailable or overloaded.', 1],
        'never the provider error text (an internal host)',
      );
      // The status reads' policy: 5 s after the first failure.
      const ahead = Date.parse(retry.nextAttemptAt) - Date.now();
      assert.ok(ahead > 0 && ahead <= 5500, `${retry.nextAttemptAt} is ${ahead} ms ahead`);
    } finally {
      providerDown = false;
    }
    assert.deepEqual(await ended(meeting), { state: 'done', reason: null });
    const after = (await status(recordingId)).body as MeetingJoin;
    assert.deepEqual([after.botState, after.retry], ['done', undefined]);
  });

  it('404 for a recording that no meeting join made, and for another organization', async () => {
    const plain = await api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: { 'X-Service-Api-Key': org.apiKey },
      json: { record: { externalId: randomUUID() } },
    });
    const none = await status(plain.body.id as string);
    assert.deepEqual([none.status, none.body.errorCode, none.body.resource], [404, 'not_found', 'Meeting join']);
    assert.equal((await status('not-a-uuid')).status, 404);
    const other = await createTestOrg(pool);
    const ownJoin = await pool.oneFirst(sql.type(z.object({ recording_id: z.string() }))`
      SELECT recording_id FROM meeting_joins WHERE organization_id = ${org.organizationId} LIMIT 1`);
    assert.equal((await status(ownJoin, { 'X-Service-Api-Key': other.apiKey })).status, 404);
  });
});
