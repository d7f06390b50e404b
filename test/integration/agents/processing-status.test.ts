import { strict as assert } from 'node:assert';
import {
  assistantMessage,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { waitFor } from '../../../harness/wait.js';
import { LocalSignalExtractor } from '../../../src/providers/signal-extractor/local.js';
import type { Exchange, SignalExtractor } from '../../../src/providers/signal-extractor/types.js';

/**
 * The processing status reads report (issue 51, point 4; decision 0209): `pending` while received
 * events wait (a gap too), `processing` while the responses' analyses run, `completed` when nothing
 * is left. Before, an ended and fully processed session read `pending` forever, and `processing` and
 * `completed`, offered by the filter, never occurred. Incremental sync sees each change.
 */
describe('agent sessions: the processing status reads report', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  let app: TestAgentApp;
  /** Analyses wait until the test opens the gate. */
  let open: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const local = new LocalSignalExtractor();
  const extractor: SignalExtractor = {
    name: 'local',
    async extract(exchange: Exchange) {
      await gate;
      return local.extract(exchange);
    },
  };

  before(async () => {
    ctx = await processingContext({ credits: 100, deps: { extractor } });
    app = await ctx.newApp();
  });
  after(async () => {
    open();
    await ctx?.close();
  });

  const key = () => ({ 'X-Service-Api-Key': ctx.org.apiKey });
  const read = async (sessionId: string) =>
    (await ctx.api.request(`/v3/rest/agent-conversations/sessions/${sessionId}`, { headers: key() })).body;
  const statusOf = async (sessionId: string) => (await read(sessionId)).processingStatus as string;
  const listed = async (processingStatus: string) =>
    (
      await ctx.api.request(`/v3/rest/agent-conversations/sessions?applicationId=${app.app.id}&processingStatus=${processingStatus}`, {
        headers: key(),
      })
    ).body.sessions.map((s: { sessionId: string }) => s.sessionId) as string[];
  /** A sync client's cursor once it has read every change so far. */
  const caughtUp = async () => {
    let page = await ctx.api.request('/v3/rest/agent-conversations/sessions?updatedSince=1970-01-01T00:00:00Z&limit=100', {
      headers: key(),
    });
    while (page.body.has_more)
      page = await ctx.api.request(`/v3/rest/agent-conversations/sessions?cursor=${encodeURIComponent(page.body.nextCursor)}&limit=100`, {
        headers: key(),
      });
    return page.body.nextCursor as string;
  };
  const reaches = async (sessionId: string, status: string) => {
    assert.ok(
      await waitFor(async () => (await statusOf(sessionId)) === status, 30_000, 100),
      `${sessionId} never read ${status}: ${JSON.stringify(await read(sessionId))}`,
    );
  };

  it('pending at a gap, processing while analyses run, completed when ended and done: in the detail, the list filter and sync', async () => {
    // An open session with sequence 2 missing: processing waits at the gap.
    const first = await ctx.ingest(
      app,
      sessionRequest(app, [userMessage(1, 'The export is broken'), userMessage(3, 'Hello?')], { externalSessionId: 'status-1' }),
    );
    assert.deepEqual([first.status, first.body.processingStatus], [202, 'pending']);
    const sessionId = first.body.sessionId as string;
    await ctx.processedThrough(sessionId, 1);
    assert.equal(await statusOf(sessionId), 'pending', 'waiting at the gap: events received and not processed');
    assert.ok((await listed('pending')).includes(sessionId));

    // The answer arrives and the session ends: every event is processed, its analysis waits at the gate.
    const ended = await ctx.ingest(
      app,
      sessionRequest(app, [assistantMessage(2, 'Sorry, I could not export that. The CSV export is broken today.')], {
        externalSessionId: 'status-1',
        status: 'ended',
      }),
    );
    assert.equal(ended.body.processingStatus, 'pending');
    await reaches(sessionId, 'processing');
    const processing = await read(sessionId);
    assert.deepEqual([processing.status, processing.processedThroughSequence, processing.highestSequence], ['ended', 3, 3]);
    assert.deepEqual(await listed('processing'), [sessionId]);
    assert.deepEqual(await listed('completed'), []);
    // A client syncing now has seen the session as `processing`; it must hear about `completed`.
    const cursor = await caughtUp();

    // The analysis runs: nothing is left.
    open();
    await reaches(sessionId, 'completed');
    assert.deepEqual(await listed('completed'), [sessionId]);
    assert.deepEqual(await listed('pending'), []);
    assert.deepEqual(await listed('processing'), []);

    // Incremental sync reports the session again, completed: the analysis round moved its row.
    const changes = await ctx.api.request(`/v3/rest/agent-conversations/sessions?cursor=${encodeURIComponent(cursor)}&limit=100`, {
      headers: key(),
    });
    assert.deepEqual(
      (changes.body.sessions as { sessionId: string; processingStatus: string }[]).map((s) => [s.sessionId, s.processingStatus]),
      [[sessionId, 'completed']],
    );

    // An open session that is processed is completed too, and pending again with its next events.
    gate = Promise.resolve();
    const open2 = await ctx.ingest(app, sessionRequest(app, [userMessage(1, 'Hi')], { externalSessionId: 'status-2' }));
    const second = open2.body.sessionId as string;
    await reaches(second, 'completed');
    const more = await ctx.ingest(app, sessionRequest(app, [userMessage(3, 'Anyone?')], { externalSessionId: 'status-2' }));
    assert.equal(more.status, 202);
    assert.equal(await statusOf(second), 'pending');
  });

  it('a filter value that is not a processing status is a 400 naming the values', async () => {
    const bad = await ctx.api.request('/v3/rest/agent-conversations/sessions?processingStatus=done', { headers: key() });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errorCode, 'validation_failed');
    assert.deepEqual(bad.body.errors, [
      { path: 'query.processingStatus', message: 'must be one of: pending, processing, completed, billing_blocked, capture_disabled' },
    ]);
  });
});
