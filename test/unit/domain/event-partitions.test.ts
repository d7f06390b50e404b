import { strict as assert } from 'node:assert';
import {
  addWeeks,
  compareUuids,
  nextUuid,
  piecesAround,
  timeOfUuid,
  uuidAtTime,
  weekPartitionName,
  weekStart,
} from '../../../src/domain/event-partitions.js';

describe('the weekly partitions of agent_events (pure)', () => {
  it('starts weeks on Monday 00:00 UTC', () => {
    assert.equal(weekStart(new Date('2026-12-03T13:22:08Z')).toISOString(), '2026-11-30T00:00:00.000Z');
    assert.equal(weekStart(new Date('2026-11-30T00:00:00Z')).toISOString(), '2026-11-30T00:00:00.000Z');
    assert.equal(weekStart(new Date('2026-12-06T23:59:59.999Z')).toISOString(), '2026-11-30T00:00:00.000Z');
    assert.equal(addWeeks(new Date('2026-11-30T00:00:00Z'), 5).toISOString(), '2027-01-04T00:00:00.000Z');
  });

  it("bounds a week by the smallest UUIDv7 of its first millisecond, which PostgreSQL's uuid order keeps", () => {
    const at = new Date('2026-11-30T00:00:00Z');
    const bound = uuidAtTime(at);
    assert.equal(
      bound,
      `${at
        .getTime()
        .toString(16)
        .padStart(12, '0')
        .replace(/^(.{8})/, '$1-')}-0000-0000-000000000000`,
    );
    assert.equal(timeOfUuid(bound).getTime(), at.getTime());
    // A UUIDv7 made in that millisecond sorts at or after it, and before the next millisecond's bound.
    const made = `${bound.slice(0, 14)}7abc-9def-0123456789ab`;
    assert.ok(compareUuids(made, bound) > 0 && compareUuids(made, uuidAtTime(new Date(at.getTime() + 1))) < 0);
    assert.throws(() => uuidAtTime(new Date(-1)), RangeError);
  });

  it('counts on past the last byte', () => {
    assert.equal(nextUuid('00000000-0000-0000-0000-0000000000ff'), '00000000-0000-0000-0000-000000000100');
    assert.equal(nextUuid('0123abcd-ffff-ffff-ffff-ffffffffffff'), '0123abce-0000-0000-0000-000000000000');
    assert.throws(() => nextUuid('ffffffff-ffff-ffff-ffff-ffffffffffff'), RangeError);
  });

  it('splits a week around the legacy ids inside it, leaving no piece empty', () => {
    const range = { from: '01a20000-0000-0000-0000-000000000000', to: '01a30000-0000-0000-0000-000000000000' };
    assert.deepEqual(piecesAround(range, []), [range]);
    assert.deepEqual(piecesAround(range, ['00000000-0000-4000-8000-000000000000', '01a30000-0000-0000-0000-000000000000']), [range]);
    const x = '01a23000-1111-4000-8000-000000000001';
    const y = '01a23000-1111-4000-8000-000000000002';
    assert.deepEqual(piecesAround(range, [y, x.toUpperCase(), x]), [
      { from: range.from, to: x },
      { from: '01a23000-1111-4000-8000-000000000003', to: range.to },
    ]);
    assert.deepEqual(piecesAround(range, [range.from]), [{ from: '01a20000-0000-0000-0000-000000000001', to: range.to }]);
  });

  it('names a week and its pieces', () => {
    const week = new Date('2026-11-30T00:00:00Z');
    assert.equal(weekPartitionName(week), 'agent_events_w20261130');
    assert.equal(weekPartitionName(week, 2), 'agent_events_w20261130_2');
  });
});
