import { strict as assert } from 'node:assert';
import { TellPacer } from '../../../src/agents/tell-pacer.js';

/** The pace of routine workflow signals (issue 34, decision 0201), on a clock the test moves. */
describe('TellPacer', () => {
  const clocked = (perSecond: number) => {
    const clock = { now: 1_000_000 };
    return { clock, pacer: new TellPacer(perSecond, () => clock.now) };
  };

  it('after a quiet spell a second of slots goes at once; the rest are deferred one slot apart', () => {
    const { pacer } = clocked(4);
    const waits = Array.from({ length: 10 }, (_, i) => pacer.slot(`s${i}`));
    // Slots at -1000, -750, -500, -250 and 0 ms go now; then +250, +500, +750, +1000 and +1250 ms.
    assert.deepEqual(waits, [0, 0, 0, 0, 0, 250, 500, 750, 1000, 1250]);
    assert.equal(pacer.deferred, 5);
  });

  it('a deferred session keeps its slot: earlier it is deferred to the same slot, then it goes without taking another', () => {
    const { clock, pacer } = clocked(1);
    for (let i = 0; i < 2; i++) assert.equal(pacer.slot(`s${i}`), 0);
    assert.equal(pacer.slot('late'), 1000);
    clock.now += 400;
    assert.equal(pacer.slot('late'), 600, 'an ingest brought it back early: the same slot');
    clock.now += 550;
    assert.equal(pacer.slot('late'), 0, 'its slot has come (within 100 ms)');
    assert.equal(pacer.deferred, 0);
    // Its coming back took no slot: the next one is the slot after its own.
    assert.equal(pacer.slot('next'), 1050, 'the slot after its own (+2000 ms from the start)');
  });

  it('slots not taken within a minute are dropped (their session came back on another worker)', () => {
    const { clock, pacer } = clocked(1);
    for (let i = 0; i < 5; i++) pacer.slot(`s${i}`);
    assert.equal(pacer.deferred, 3);
    clock.now += 3000 + 61_000;
    pacer.slot('other');
    assert.equal(pacer.deferred, 0);
  });

  it('with no limit (0) every signal goes at once', () => {
    const { pacer } = clocked(0);
    assert.deepEqual(
      Array.from({ length: 1000 }, (_, i) => pacer.slot(`s${i}`)).filter((w) => w > 0),
      [],
    );
  });
});
