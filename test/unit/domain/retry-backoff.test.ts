import { strict as assert } from 'node:assert';
import { nextAttemptAt, retryDelayMs } from '../../../src/domain/retry-backoff.js';

describe('retry backoff (the next attempt of a retried activity)', () => {
  // The URL transfer's policy (workflows/media-ingestion): 10 s doubling up to 30 minutes, 60 attempts.
  const transfer = { initialIntervalMs: 10_000, backoffCoefficient: 2, maximumIntervalMs: 1_800_000, maximumAttempts: 60 };

  it('doubles from the initial interval: min(initial × coefficient^(attempt−1), maximum)', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 8, 9, 59].map((n) => retryDelayMs(transfer, n)),
      [10_000, 20_000, 40_000, 80_000, 1_280_000, 1_800_000, 1_800_000],
    );
  });

  it('is null after the last attempt (the failure is terminal then)', () => {
    assert.equal(retryDelayMs(transfer, 60), null);
    assert.equal(retryDelayMs(transfer, 61), null);
    assert.equal(retryDelayMs({ initialIntervalMs: 1000, maximumAttempts: 0 }, 10_000), 100_000, 'unlimited');
  });

  it("fills Temporal's defaults: coefficient 2, maximum 100 × initial", () => {
    assert.deepEqual(
      [1, 2, 7, 8, 50].map((n) => retryDelayMs({ initialIntervalMs: 1000 }, n)),
      [1000, 2000, 64_000, 100_000, 100_000],
    );
  });

  it('a coefficient of 1 waits the initial interval each time, and huge attempts do not overflow', () => {
    assert.equal(retryDelayMs({ initialIntervalMs: 5000, backoffCoefficient: 1, maximumIntervalMs: 60_000 }, 40), 5000);
    assert.equal(retryDelayMs({ initialIntervalMs: 5000, backoffCoefficient: 3, maximumIntervalMs: 60_000 }, 5000), 60_000);
  });

  it('the next attempt time is the failure time plus the delay', () => {
    assert.equal(nextAttemptAt(transfer, 3, 1_000_000), 1_040_000);
    assert.equal(nextAttemptAt(transfer, 60, 1_000_000), null);
  });

  it('refuses an attempt that is not a positive integer', () => {
    assert.throws(() => retryDelayMs(transfer, 0), RangeError);
    assert.throws(() => retryDelayMs(transfer, 1.5), RangeError);
  });
});
