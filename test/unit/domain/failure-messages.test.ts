import { strict as assert } from 'node:assert';
import { FAILURE_MESSAGES, failureMessage, UNKNOWN_FAILURE_MESSAGE } from '../../../src/domain/failure-messages.js';
import { FAILURE_TYPES } from '../../../src/domain/failure-types.js';

describe('failure messages (what a retry says beside its errorCode)', () => {
  it('every failure type has one sentence of its own', () => {
    for (const type of FAILURE_TYPES) assert.match(FAILURE_MESSAGES[type], /^[A-Z].{10,}\.$/, type);
    assert.equal(new Set(Object.values(FAILURE_MESSAGES)).size, FAILURE_TYPES.length, 'no two types share a message');
  });

  it("adds the fetcher's reason only in its fixed shapes", () => {
    assert.equal(failureMessage('asset_unavailable', 'HTTP 503'), 'The media server is unavailable or overloaded (HTTP 503).');
    assert.equal(failureMessage('asset_dns_failed', 'DNS: ENOTFOUND'), "The media URL's host name could not be resolved (DNS: ENOTFOUND).");
    assert.equal(
      failureMessage('asset_network_error', 'network: ECONNRESET'),
      'The connection to the media server failed or was interrupted (network: ECONNRESET).',
    );
  });

  it('drops any other text: hosts, addresses, stacks, queries', () => {
    for (const detail of [
      'getaddrinfo ENOTFOUND media.internal.corp',
      'HTTP 503 from 10.0.0.7',
      'connect ECONNREFUSED 127.0.0.1:5432',
      'Error: boom\n    at step (/srv/activities/media.ts:33:32)',
      'relation "media_ingestions" does not exist',
      'DNS: ENOTFOUND\nmore',
    ])
      assert.equal(failureMessage('asset_network_error', detail), FAILURE_MESSAGES.asset_network_error, detail);
  });

  it('a code outside the catalogue gets the generic message', () => {
    assert.equal(failureMessage('ECONNREFUSED'), UNKNOWN_FAILURE_MESSAGE);
    assert.equal(failureMessage('toString'), UNKNOWN_FAILURE_MESSAGE);
  });
});
