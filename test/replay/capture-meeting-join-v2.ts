/**
 * Captures the meeting join of the `meeting-join-bounded-history` patch (run once when it was
 * introduced; meeting-join/v1.json keeps the shape from before): `npx tsx test/replay/capture-meeting-join-v2.ts`.
 *  - meeting-join/v2.json: the local recorder's bot joins, records and is done; its media is handed
 *    off. The payloads are encrypted with the test configuration's key (the replay test decodes them).
 */
import { Runtime } from '@temporalio/worker';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalRecorder } from '../../src/providers/recorder/local.js';
import { createLogger } from '../../src/logger.js';
import { sdkLogger } from '../../src/temporal/sdk-logger.js';
import { meetingJoinIdFor } from '../../src/recordings/meeting-joins.js';
import { TEST_SIGNING_SECRET } from '../../harness/config.js';
import { processingContext } from '../../harness/agents.js';
import { createTestUser } from '../../harness/fixtures.js';
import { stopTestStack } from '../../harness/stack.js';
import { loopbackMediaDeps } from '../../harness/worker.js';
import { saveHistory } from './save-history.js';

Runtime.install({ shutdownSignals: [], logger: sdkLogger(createLogger('warn', 'intake-capture')) });
const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'intake-capture-meeting-'));
const media = await processingContext({
  env: { STORAGE_DIR: mediaDir, MEETING_STATUS_POLL_SECONDS: '1' },
  deps: { ...loopbackMediaDeps(mediaDir), recorder: new LocalRecorder({ dir: path.join(mediaDir, 'recorder'), meetingSeconds: 2 }) },
});
try {
  const member = await createTestUser(media.pool, media.org.organizationId);
  const joined = await media.api.request('/v3/rest/recordings/meeting-joins', {
    method: 'POST',
    headers: { Authorization: `Bearer ${member.accessToken}` },
    json: { type: 'meetingUrl', joinUrl: 'https://zoom.us/j/84211234500?pwd=capture' },
  });
  if (joined.status !== 201) throw new Error(`meeting join: ${joined.status}`);
  const meeting = media.api.temporal.client.workflow.getHandle(
    meetingJoinIdFor(TEST_SIGNING_SECRET, media.org.organizationId, 'zoom:84211234500'),
  );
  const result = await meeting.result();
  if (result.state !== 'done') throw new Error(`meeting join ended ${JSON.stringify(result)}`);
  await saveHistory('meeting-join', 'v2', meeting);
} finally {
  await media.close();
  await stopTestStack();
  await rm(mediaDir, { recursive: true, force: true });
}
