import { strict as assert } from 'node:assert';
import { maxAttempts, retryDelayAfter, shouldDisable, WEBHOOK_RETRY_DELAYS_MS } from '../../../src/domain/webhook-retry.js';

describe('webhook retry schedule', () => {
  it('is the Standard Webhooks schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    const s = 1000;
    const h = 3600 * s;
    assert.deepEqual(WEBHOOK_RETRY_DELAYS_MS, [5 * s, 300 * s, 1800 * s, 2 * h, 5 * h, 10 * h, 10 * h]);
    assert.equal(maxAttempts(), 8);
    assert.equal(retryDelayAfter(0), 0);
    assert.equal(retryDelayAfter(1), 5 * s);
    assert.equal(retryDelayAfter(7), 10 * h);
    assert.equal(retryDelayAfter(8), null);
  });

  it('retries for at least 24 hours, the first retry within 30 seconds', () => {
    const total = WEBHOOK_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    assert.ok(total >= 24 * 3_600_000, `${total} ms`);
    assert.ok(retryDelayAfter(1)! <= 30_000);
  });

  it('takes an injected schedule (tests)', () => {
    assert.equal(maxAttempts([10, 20]), 3);
    assert.equal(retryDelayAfter(2, [10, 20]), 20);
    assert.equal(retryDelayAfter(3, [10, 20]), null);
  });

  it('disables an endpoint failing for 5 days, not earlier, never one that is not failing', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    assert.equal(shouldDisable(null, now), false);
    assert.equal(shouldDisable(new Date('2026-01-05T00:00:01Z'), now), false);
    assert.equal(shouldDisable(new Date('2026-01-05T00:00:00Z'), now), true);
  });
});
