import { strict as assert } from 'node:assert';
import { mediaIngestionStart } from '../../../src/domain/media-ingestion-start.js';

const ids = { organizationId: 'org', recordingId: 'rec', ingestionId: 'ing' };
const settings = { taskQueue: 'intake', mediaTaskQueue: 'intake-media', transferRetryInitialSeconds: 10, heartbeatTimeoutSeconds: 120 };
const attributes = (start: ReturnType<typeof mediaIngestionStart>) => start.typedSearchAttributes.map((a) => [a.key.name, a.value]);

describe('media ingestion start', () => {
  it('URL media: the one workflow id, the transfer settings, queued', () => {
    const start = mediaIngestionStart({ ...ids, kind: 'url' }, settings);
    assert.equal(start.workflowType, 'mediaIngestionWorkflow');
    assert.equal(start.workflowId, 'media-ingestion/rec');
    assert.equal(start.taskQueue, 'intake');
    assert.deepEqual(start.args, [
      {
        organizationId: 'org',
        recordingId: 'rec',
        ingestionId: 'ing',
        kind: 'url',
        transferRetryInitialSeconds: 10,
        heartbeatTimeoutSeconds: 120,
        mediaTaskQueue: 'intake-media',
      },
    ]);
    assert.deepEqual(attributes(start), [
      ['IntakeOrganizationId', 'org'],
      ['IntakeRecordingId', 'rec'],
      ['IntakeStatus', 'queued'],
    ]);
  });

  it('a direct upload is not transferred and waits for its bytes', () => {
    const start = mediaIngestionStart({ ...ids, kind: 'upload' }, settings);
    assert.equal('transferRetryInitialSeconds' in start.args[0], false);
    assert.deepEqual(attributes(start).at(-1), ['IntakeStatus', 'waiting']);
  });

  it("a meeting join's child: only the settings it was given, on its parent's task queue", () => {
    const start = mediaIngestionStart({ ...ids, kind: 'url' }, { mediaTaskQueue: 'intake-media' });
    assert.equal('taskQueue' in start, false);
    assert.deepEqual(start.args, [
      { organizationId: 'org', recordingId: 'rec', ingestionId: 'ing', kind: 'url', mediaTaskQueue: 'intake-media' },
    ]);
  });
});
