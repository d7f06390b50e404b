import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import {
  createIntakeClient,
  IntakeError,
  paginate,
  paginateByPage,
  PagingError,
  syncQuery,
  unwrap,
  type IntakeClient,
} from '../../../clients/typescript/src/index.js';
import {
  assistantMessage,
  feedbackEvent,
  processingContext,
  sessionRequest,
  userMessage,
  type ProcessingContext,
  type TestAgentApp,
} from '../../../harness/agents.js';
import { createTestUser } from '../../../harness/fixtures.js';

/** The typed client (clients/typescript) against the real stack: the API on a real port, real HTTP. */
describe('typed client (@intake/client) against the running stack', function () {
  this.timeout(120_000);
  let ctx: ProcessingContext;
  let intake: IntakeClient;
  let app: TestAgentApp;
  /** Every request the API-key client sent, as it went on the wire. */
  const sent: Request[] = [];

  async function caught(promise: Promise<unknown>): Promise<IntakeError> {
    const error = await promise.then(
      () => assert.fail('expected an IntakeError'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof IntakeError, String(error));
    return error;
  }

  before(async () => {
    ctx = await processingContext({ credits: 100 });
    app = await ctx.newApp();
    intake = createIntakeClient({
      baseUrl: `${ctx.api.url}/`,
      apiKey: ctx.org.apiKey,
      fetch: async (request) => {
        sent.push(request.clone());
        return fetch(request);
      },
    });
  });
  after(async () => ctx?.close());

  it('authenticates with an API key, a user access token or neither (a typed 401)', async () => {
    const org = await unwrap(intake.GET('/v3/rest/organization'));
    assert.equal(org.organizationId, ctx.org.organizationId);
    assert.equal(sent.at(-1)!.headers.get('x-service-api-key'), ctx.org.apiKey);

    const user = await createTestUser(ctx.pool, ctx.org.organizationId);
    const asUser = createIntakeClient({ baseUrl: ctx.api.url, accessToken: user.accessToken });
    assert.equal((await unwrap(asUser.GET('/v3/rest/organization'))).organizationId, ctx.org.organizationId);

    const anonymous = createIntakeClient({ baseUrl: ctx.api.url });
    const error = await caught(unwrap(anonymous.GET('/v3/rest/organization')));
    assert.deepEqual([error.status, error.errorCode], [401, 'unauthenticated']);
    const wrong = await caught(unwrap(createIntakeClient({ baseUrl: ctx.api.url, apiKey: 'ik_wrong' }).GET('/v3/rest/organization')));
    assert.deepEqual([wrong.status, wrong.errorCode], [401, 'invalid_credentials']);
    assert.throws(
      () => createIntakeClient({ baseUrl: ctx.api.url, apiKey: 'a', agentKey: 'b' }),
      /one of apiKey, accessToken and agentKey/,
    );
  });

  it('creates a feedback source and a record, reads it back, and answers a duplicate with a typed 409 carrying its details', async () => {
    const idempotencyKey = randomUUID();
    const source = await unwrap(
      intake.POST('/v3/rest/feedback-sources', {
        body: { name: 'Support desk', type: 'api' },
        headers: { 'Idempotency-Key': idempotencyKey },
      }),
    );
    assert.equal(source.name, 'Support desk');
    assert.equal(sent.at(-1)!.headers.get('idempotency-key'), idempotencyKey);
    const person = await unwrap(
      intake.PUT('/v3/rest/people', { body: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', boundary: 'external' } }),
    );
    const body = {
      person_id: person.id,
      display_ts: '2026-11-01T09:00:00Z',
      external_id: 'ticket-4711',
      fields: [{ category: 'content' as const, type: 'string' as const, name: 'body', value: 'Export to CSV fails' }],
    };
    const record = await unwrap(
      intake.POST('/v3/rest/feedback-sources/{id}/records', { params: { path: { id: String(source.id) } }, body }),
    );
    const found = await unwrap(
      intake.GET('/v3/rest/feedback-sources/{id}/records', {
        params: { path: { id: String(source.id) }, query: { external_id: 'ticket-4711' } },
      }),
    );
    assert.deepEqual(
      found.records.map((r) => r.id),
      [record.id],
    );

    const duplicate = await caught(
      unwrap(intake.POST('/v3/rest/feedback-sources/{id}/records', { params: { path: { id: String(source.id) } }, body })),
    );
    assert.deepEqual([duplicate.status, duplicate.errorCode], [409, 'duplicate_external_id']);
    assert.equal((duplicate.body as { id: unknown }).id, record.id);
    assert.ok(duplicate.message.length > 0);
  });

  it('creates an agent application and deletes it: a 204 unwraps to undefined, and the application is gone (a typed 404)', async () => {
    const created = await unwrap(intake.POST('/v3/rest/agent-applications', { body: { name: 'Client app', agentKey: 'client-app' } }));
    const path = { applicationId: created.applicationId };
    assert.equal(await unwrap(intake.DELETE('/v3/rest/agent-applications/{applicationId}', { params: { path } })), undefined);
    const gone = await caught(unwrap(intake.GET('/v3/rest/agent-applications/{applicationId}', { params: { path } })));
    assert.deepEqual([gone.status, gone.errorCode], [404, 'not_found']);
  });

  it('answers a bad request with a typed 400 listing the invalid fields, and an unknown recording with a typed 404', async () => {
    const invalid = await caught(unwrap(intake.POST('/v3/rest/feedback-sources', { body: { name: '', type: 'api' } })));
    assert.deepEqual([invalid.status, invalid.errorCode], [400, 'validation_failed']);
    assert.ok(
      invalid.errors?.some((e) => e.path === 'body.name'),
      JSON.stringify(invalid.errors),
    );

    const missing = await caught(
      unwrap(intake.GET('/v3/rest/recordings/{recordingId}', { params: { path: { recordingId: randomUUID() } } })),
    );
    assert.deepEqual([missing.status, missing.errorCode], [404, 'not_found']);
    // Without unwrap, the error is openapi-fetch's typed `error`, its errorCode narrowed to the route's codes.
    const { error, response } = await intake.GET('/v3/rest/recordings/{recordingId}', { params: { path: { recordingId: randomUUID() } } });
    assert.deepEqual([response.status, error?.errorCode], [404, 'not_found']);
  });

  it('creates recordings and reads them, page by page through paginateByPage', async () => {
    const created = [];
    for (const externalId of ['call-1', 'call-2', 'call-3']) {
      created.push(await unwrap(intake.POST('/v3/rest/recordings', { body: { name: externalId, record: { externalId } } })));
    }
    const one = await unwrap(intake.GET('/v3/rest/recordings/{recordingId}', { params: { path: { recordingId: created[0]!.id } } }));
    assert.equal(one.name, 'call-1');
    const requests = sent.length;
    const ids = [];
    for await (const recording of paginateByPage(async (page) => {
      const data = await unwrap(intake.GET('/v3/rest/recordings', { params: { query: { page, limit: 2 } } }));
      return { items: data.recordings, hasMore: data.has_more };
    })) {
      ids.push(recording.id);
    }
    assert.deepEqual(ids.sort(), created.map((r) => r.id).sort());
    assert.equal(sent.length - requests, 2);
  });

  it('ingests an agent session with an agent key, and lists the signals processing made from it', async () => {
    const agent = createIntakeClient({ baseUrl: ctx.api.url, agentKey: app.secret });
    const events = [userMessage(1, 'The export is broken'), assistantMessage(2, 'Sorry about that.'), feedbackEvent(3, 'e2', 'negative')];
    const result = await unwrap(
      agent.POST('/v3/rest/agent-conversations/ingest', {
        body: sessionRequest(app, events, { externalSessionId: 'client-1', status: 'ended' }),
      }),
    );
    assert.equal(result.acceptedEventCount, 3);
    await ctx.processedThrough(result.sessionId, 3);

    const sessions = await unwrap(
      intake.GET('/v3/rest/agent-conversations/sessions', { params: { query: { applicationId: app.app.id } } }),
    );
    assert.deepEqual(
      sessions.sessions.map((s) => s.sessionId),
      [result.sessionId],
    );
    const signals = [];
    for await (const signal of paginateByPage(async (page) => {
      const data = await unwrap(intake.GET('/v3/rest/signals', { params: { query: { sessionId: result.sessionId, page, limit: 1 } } }));
      return { items: data.signals, hasMore: data.has_more };
    })) {
      signals.push(signal);
    }
    const explicit = signals.filter((s) => s.source === 'explicit_feedback');
    assert.deepEqual(
      explicit.map((s) => [s.eventExternalId, s.rating]),
      [['e2', 'negative']],
    );
    // The agent key is for ingest only.
    const refused = await caught(unwrap(agent.GET('/v3/rest/signals')));
    assert.equal(refused.status, 401);
  });

  it('reads every signal past the first page with paginate() and syncQuery, resumes from the stored cursor, and refuses offset mode', async () => {
    const agent = createIntakeClient({ baseUrl: ctx.api.url, agentKey: app.secret });
    // Seven ratings of one answer: seven explicit signals, four pages of two.
    const ratings = Array.from({ length: 7 }, (_, i) =>
      feedbackEvent(i + 2, 'answer', i % 2 ? 'negative' : 'positive', { externalEventId: `rating-${i}` }),
    );
    const result = await unwrap(
      agent.POST('/v3/rest/agent-conversations/ingest', {
        body: sessionRequest(app, [assistantMessage(1, 'Here is the export.', { externalEventId: 'answer' }), ...ratings], {
          externalSessionId: 'paging-1',
        }),
      }),
    );
    await ctx.processedThrough(result.sessionId, 8);

    let resumeFrom: string | undefined;
    const fetchPage = async (cursor: string | undefined) => {
      const page = await unwrap(
        intake.GET('/v3/rest/signals', { params: { query: { ...syncQuery(cursor), sessionId: result.sessionId, limit: 2 } } }),
      );
      resumeFrom = page.nextCursor ?? resumeFrom;
      return { items: page.signals, hasMore: page.has_more, nextCursor: page.nextCursor };
    };
    const everything = await unwrap(intake.GET('/v3/rest/signals', { params: { query: { sessionId: result.sessionId, limit: 100 } } }));
    assert.equal(everything.signals.filter((s) => s.source === 'explicit_feedback').length, 7);
    const requests = sent.length;
    const read = [];
    for await (const signal of paginate(fetchPage)) read.push(signal.id);
    assert.deepEqual(read.sort(), everything.signals.map((s) => s.id).sort());
    const pages = Math.ceil(read.length / 2);
    assert.ok(pages >= 4);
    assert.equal(sent.length - requests, pages, 'a page per two signals, and no request past the one that said has_more: false');

    // Nothing changed since: resuming from the stored cursor reads nothing, in one request.
    const again = [];
    for await (const signal of paginate(fetchPage, resumeFrom)) again.push(signal);
    assert.deepEqual(again, []);

    // The list in offset mode (no updatedSince, no cursor) has no cursor to follow: an error, not a silent first page.
    const offset = paginate(async () => {
      const page = await unwrap(intake.GET('/v3/rest/signals', { params: { query: { sessionId: result.sessionId, limit: 2 } } }));
      return { items: page.signals, hasMore: page.has_more, nextCursor: page.nextCursor };
    });
    const firstPage = [];
    const error = await (async () => {
      for await (const signal of offset) firstPage.push(signal);
    })().then(
      () => assert.fail('paginate() stopped after the first page of an offset list'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof PagingError, String(error));
    assert.equal(firstPage.length, 2);
  });
});
