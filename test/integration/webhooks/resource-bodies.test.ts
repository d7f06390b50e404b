import { strict as assert } from 'node:assert';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
} from '../../../harness/agents.js';
import { createTestKey } from '../../../harness/fixtures.js';
import { waitFor } from '../../../harness/wait.js';
import { startWebhookWaker, type WebhookWaker } from '../../../src/webhooks/waker.js';
import { createTestEndpoint, deliveriesOf, testGateway, TestReceiver } from '../../helpers/webhooks.js';

interface Body {
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

/**
 * A delivery's body carries the resource as the REST API lists it (issue 31): real
 * `signal.created` and `agent_session.processed` events of a processed session, and the
 * `recording.transcript_completed` of a recording created over REST, each compared with the list
 * item the REST API returns for the same id.
 */
describe('webhook bodies: the resource as the REST API shows it', function () {
  this.timeout(180_000);
  let ctx: ProcessingContext & { taskQueue: string };
  let temporal: Awaited<ReturnType<typeof testGateway>>;
  let waker: WebhookWaker | undefined;
  const r = new TestReceiver();

  before(async () => {
    ctx = await processingContext({ credits: 100 });
    temporal = await testGateway();
  });
  after(async () => {
    await waker?.close();
    await temporal?.close();
    await r.close();
    await ctx?.close();
  });

  it('carries data.signal, data.session and data.recording equal to the REST lists, fixed at the first attempt', async () => {
    const url = await r.listen();
    const endpoint = await createTestEndpoint(ctx.pool, ctx.org.organizationId, { url });
    r.secrets = [endpoint.secret];

    const app = await ctx.newApp();
    const ingest = await ctx.ingest(
      app,
      sessionRequest(
        app,
        [
          userMessage(1, 'The export is broken.'),
          assistantMessage(2, 'Sorry about the export.'),
          feedbackEvent(3, 'e2', 'negative', { feedback: { targetEventExternalId: 'e2', rating: 'negative', labels: ['wrong'] } }),
        ],
        { externalSessionId: 'webhook-body', status: 'ended' },
      ),
    );
    assert.equal(ingest.status, 202, JSON.stringify(ingest.body));
    const sessionId = ingest.body.sessionId as string;
    await ctx.processedThrough(sessionId, 3);

    const key = {
      'X-Service-Api-Key': (await createTestKey(ctx.pool, ctx.org.organizationId, ['recordings:write', 'recordings:read'])).apiKey,
    };
    const created = await ctx.api.request('/v3/rest/recordings', {
      method: 'POST',
      headers: key,
      json: {
        record: { externalId: 'webhook-body' },
        name: 'Weekly sync',
        recordedAt: '2026-11-26T08:00:00Z',
        transcript: { utterances: [{ startSec: 0, endSec: 1, speaker: 0, text: 'Hello.' }] },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const recordingId = created.body.id as string;

    // The bodies are built only now, at the first attempt: nothing changes the resources any more.
    waker = await startWebhookWaker({
      databaseUrl: ctx.databaseUrl,
      pool: ctx.pool,
      temporal: temporal.gateway,
      taskQueue: `${ctx.taskQueue}-webhooks`,
      sweepMs: 1000,
    });
    const settled = await waitFor(async () => {
      const rows = await deliveriesOf(ctx.pool, endpoint.id);
      return rows.length > 0 && rows.every((d) => d.status === 'succeeded');
    }, 60_000);
    assert.ok(settled, JSON.stringify(await deliveriesOf(ctx.pool, endpoint.id)));
    for (const req of r.received) assert.deepEqual(req.verifiedWith, [0]);
    const bodies = r.received.map((req) => JSON.parse(req.body) as Body);
    const ofType = (type: string) => bodies.filter((b) => b.type === type);

    const orgKey = { 'X-Service-Api-Key': ctx.org.apiKey };
    const signals = await ctx.api.request(`/v3/rest/signals?sessionId=${sessionId}&limit=100`, { headers: orgKey });
    assert.equal(signals.status, 200);
    const signalBodies = ofType('signal.created');
    assert.equal(signalBodies.length, signals.body.signals.length);
    assert.ok(signalBodies.length >= 1);
    for (const b of signalBodies) {
      const listed = signals.body.signals.find((s: { id: string }) => s.id === b.data.signalId);
      assert.ok(listed, b.data.signalId);
      assert.deepEqual(b.data.signal, listed);
    }

    const sessions = await ctx.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${app.app.id}`, { headers: orgKey });
    assert.equal(sessions.status, 200);
    assert.equal(sessions.body.sessions[0].sessionId, sessionId);
    const processed = ofType('agent_session.processed');
    assert.ok(processed.length >= 1);
    for (const b of processed) assert.deepEqual(b.data.session, sessions.body.sessions[0]);
    assert.equal(processed.at(-1)!.data.session.sessionId, sessionId);

    const recordings = await ctx.api.request('/v3/rest/recordings?limit=100', { headers: key });
    assert.equal(recordings.status, 200);
    const [transcribed] = ofType('recording.transcript_completed');
    assert.equal(transcribed!.data.recordingId, recordingId);
    assert.deepEqual(
      transcribed!.data.recording,
      recordings.body.recordings.find((x: { id: string }) => x.id === recordingId),
    );
    assert.equal(transcribed!.data.recording.display_name, 'Weekly sync');
    assert.equal('transcript' in transcribed!.data.recording, false);

    // The stored body is the one sent: redeliveries sign the same bytes.
    const stored = await deliveriesOf(ctx.pool, endpoint.id);
    assert.deepEqual(stored.map((d) => d.body).sort(), r.received.map((req) => req.body).sort());
  });
});
