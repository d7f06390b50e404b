import { strict as assert } from 'node:assert';
import { createIntakeClient, IntakeError, unwrap } from '../../../clients/typescript/src/index.js';

/** A client whose every request gets `response` (what a proxy in front of the API may answer). */
const answering = (response: () => Response) =>
  createIntakeClient({ baseUrl: 'http://intake.invalid', apiKey: 'ik_x', fetch: async () => response() });

describe('the typed client: IntakeError from answers that are not the API’s', () => {
  it("reads a proxy's HTML 502 as unexpected_response with the status in its message", async () => {
    const intake = answering(
      () => new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': 'text/html' } }),
    );
    const error = await unwrap(intake.GET('/v3/rest/organization')).then(
      () => assert.fail('expected an IntakeError'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof IntakeError);
    assert.deepEqual(
      [error.status, error.errorCode, error.message, error.errors],
      [502, 'unexpected_response', 'HTTP 502 Bad Gateway', undefined],
    );
  });

  it('keeps the headers of an error (Retry-After of a 503)', async () => {
    const body = { message: 'The database is unavailable.', errorCode: 'database_unavailable' };
    const intake = answering(() => Response.json(body, { status: 503, headers: { 'retry-after': '1' } }));
    await assert.rejects(
      unwrap(intake.GET('/v3/rest/organization')),
      (e: unknown) => e instanceof IntakeError && e.errorCode === 'database_unavailable' && e.headers.get('retry-after') === '1',
    );
  });
});
