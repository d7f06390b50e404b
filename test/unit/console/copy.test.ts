import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DISABLE_AFTER_MS, RETRY_DELAYS_MS, retrySentence } from '../../../console/src/webhook-schedule.js';
import { WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_RETRY_DELAYS_MS } from '../../../src/domain/webhook-retry.js';
import { PROJECT_ROOT } from '../../../src/paths.js';

/** What the console says about the server, said as the server does it (issue 51: it said webhooks were retried for 5 days). */
describe('the console copy', () => {
  it("the webhooks page's retry schedule is the server's, and says what the webhooks guide says", () => {
    assert.deepEqual(RETRY_DELAYS_MS, WEBHOOK_RETRY_DELAYS_MS);
    assert.equal(DISABLE_AFTER_MS, WEBHOOK_DISABLE_AFTER_MS);
    const sentence = retrySentence();
    assert.equal(
      sentence,
      'A failed delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over about 27 hours. An endpoint without a successful attempt for 5 days is disabled.',
    );
    const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'guides', 'webhooks.md'), 'utf8').replace(/\s+/g, ' ');
    assert.ok(guide.includes('retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight attempts over about 27 hours'));
    assert.ok(guide.includes('An endpoint without a successful attempt for 5 days is disabled'));
  });
});
