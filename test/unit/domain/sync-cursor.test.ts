import { strict as assert } from 'node:assert';
import { comparePositions, decodeCursor, encodeCursor, MAX_CURSOR_LENGTH, nextPosition } from '../../../src/domain/sync-cursor.js';

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');

describe('sync cursor codec', () => {
  it('round-trips a position of its list, at the limits of xid8 and bigint', () => {
    for (const position of [
      { xid: '0', seq: '0' },
      { xid: '748', seq: '12' },
      { xid: '18446744073709551615', seq: '9223372036854775807' },
    ]) {
      const cursor = encodeCursor('signals', position);
      assert.match(cursor, /^[A-Za-z0-9_-]+$/);
      assert.ok(cursor.length <= MAX_CURSOR_LENGTH);
      assert.deepEqual(decodeCursor('signals', cursor), position);
    }
  });

  it("refuses another list's cursor", () => {
    const cursor = encodeCursor('recordings', { xid: '5', seq: '6' });
    assert.equal(decodeCursor('agent_sessions', cursor), null);
    assert.deepEqual(decodeCursor('recordings', cursor), { xid: '5', seq: '6' });
  });

  it('refuses anything it did not write', () => {
    const bad = [
      '',
      'not base64!',
      'a'.repeat(MAX_CURSOR_LENGTH + 1),
      Buffer.from('not json').toString('base64url'),
      b64([1, 'signals', '1', '2']),
      b64(null),
      b64({ v: 2, r: 'signals', x: '1', s: '2' }),
      b64({ v: 1, r: 'signals', x: 1, s: '2' }),
      b64({ v: 1, r: 'signals', x: '01', s: '2' }),
      b64({ v: 1, r: 'signals', x: '-1', s: '2' }),
      b64({ v: 1, r: 'signals', x: '1.5', s: '2' }),
      b64({ v: 1, r: 'signals', x: '18446744073709551616', s: '2' }),
      b64({ v: 1, r: 'signals', x: '1', s: '9223372036854775808' }),
      b64({ v: 1, r: 'signals', x: '1', s: '2', extra: true }),
      b64({ v: 1, r: 'signals', x: '1' }),
    ];
    for (const cursor of bad) assert.equal(decodeCursor('signals', cursor), null, cursor);
  });

  it('refuses to encode what is not a position', () => {
    assert.throws(() => encodeCursor('signals', { xid: '-1', seq: '0' }));
    assert.throws(() => encodeCursor('signals', { xid: '1', seq: '9223372036854775808' }));
  });

  it('orders positions by xid, then seq (numerically, not as text)', () => {
    assert.equal(comparePositions({ xid: '9', seq: '100' }, { xid: '10', seq: '1' }), -1);
    assert.equal(comparePositions({ xid: '10', seq: '9' }, { xid: '10', seq: '10' }), -1);
    assert.equal(comparePositions({ xid: '10', seq: '10' }, { xid: '10', seq: '10' }), 0);
    assert.equal(comparePositions({ xid: '11', seq: '0' }, { xid: '10', seq: '99' }), 1);
  });

  it('continues after the last row of a full page, from the horizon once caught up, never backwards', () => {
    const last = { xid: '40', seq: '7' };
    assert.deepEqual(nextPosition({ after: null, hasMore: true, last, horizon: '45' }), last);
    assert.deepEqual(nextPosition({ after: null, hasMore: false, last, horizon: '45' }), { xid: '45', seq: '0' });
    assert.deepEqual(nextPosition({ after: null, hasMore: false, last: null, horizon: '45' }), { xid: '45', seq: '0' });
    assert.deepEqual(nextPosition({ after: { xid: '50', seq: '3' }, hasMore: false, last: null, horizon: '45' }), { xid: '50', seq: '3' });
  });
});
