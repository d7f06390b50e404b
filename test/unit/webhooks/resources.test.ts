import { strict as assert } from 'node:assert';
import { DOMAIN_EVENT_TYPES } from '../../../src/domain/events.js';
import { eventBody } from '../../../src/webhooks/delivery.js';
import { resourceOf } from '../../../src/webhooks/resources.js';

/** Which resource each webhook body carries (issue 31); the bodies themselves: test/integration/webhooks/resource-bodies.test.ts. */
describe('webhook body resources', () => {
  it('maps every event type to its resource and the payload id that names it', () => {
    const mapped = Object.fromEntries(DOMAIN_EVENT_TYPES.map((t) => [t, resourceOf(t)]));
    assert.deepEqual(mapped, {
      'signal.created': { key: 'signal', idField: 'signalId' },
      'agent_session.processed': { key: 'session', idField: 'sessionId' },
      'agent_session.billing_blocked': { key: 'session', idField: 'sessionId' },
      'agent_session.billing_resumed': { key: 'session', idField: 'sessionId' },
      'recording.media_ready': { key: 'recording', idField: 'recordingId' },
      'recording.media_failed': { key: 'recording', idField: 'recordingId' },
      'recording.transcript_completed': { key: 'recording', idField: 'recordingId' },
      'meeting_join.ended': { key: 'recording', idField: 'recordingId' },
    });
    assert.equal(resourceOf('webhook.test'), null);
  });

  it('puts the resource beside the payload, null when it is gone', () => {
    const event = {
      type: 'recording.media_ready',
      recorded_at: '2026-11-26T09:10:00.000Z',
      payload: { recordingId: 'r', ingestionId: 'i' },
    };
    assert.equal(
      eventBody(event, { key: 'recording', value: null }),
      '{"type":"recording.media_ready","timestamp":"2026-11-26T09:10:00.000Z","data":{"recordingId":"r","ingestionId":"i","recording":null}}',
    );
    assert.deepEqual(JSON.parse(eventBody(event)).data, event.payload);
  });
});
