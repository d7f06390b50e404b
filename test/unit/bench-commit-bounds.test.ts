import { strict as assert } from 'node:assert';
import { CommitBounds } from '../../bench/commit-bounds.js';

describe('commit bounds of the webhook-delivery benchmark', () => {
  it('bounds each id by the last poll that missed it and the first that saw it, whatever the commit order', () => {
    const b = new CommitBounds(5_000);
    b.poll(0, 2, [1, 2]);
    // Id 3 commits after 4: polls keep asking from 2 until it is seen.
    b.poll(10, 12, [4]);
    assert.equal(b.low, 2);
    b.poll(20, 23, [3, 4]);
    assert.equal(b.low, 4);
    assert.deepEqual(b.seen.get(1), { after: 0, by: 2 });
    assert.deepEqual(b.seen.get(4), { after: 0, by: 12 });
    assert.deepEqual(b.seen.get(3), { after: 10, by: 23 });
    b.poll(30, 31, [5]);
    assert.deepEqual(b.seen.get(5), { after: 20, by: 31 });
  });

  it('gives up a gap (a rolled-back insert) after holeMs, and not before', () => {
    const b = new CommitBounds(5_000);
    b.poll(0, 1, [1, 3]);
    assert.equal(b.low, 1);
    b.poll(4_000, 4_001, [3]);
    assert.equal(b.low, 1);
    b.poll(6_000, 6_002, [3]);
    assert.equal(b.low, 3);
    assert.equal(b.seen.has(2), false);
  });
});
