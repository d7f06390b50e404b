import { strict as assert } from 'node:assert';
import type { EventRef, EventsIngested } from '../../../workflows/agent-session/contract.js';
import { SessionState } from '../../../workflows/agent-session/state.js';
import { planProcessing } from '../../../src/domain/agent-processing-plan.js';

function signal(overrides: Partial<EventsIngested> = {}): EventsIngested {
  return { highestSequence: null, status: 'open', processingStatus: 'pending', ...overrides };
}

function fold(...signals: EventsIngested[]): SessionState {
  const state = new SessionState();
  for (const s of signals) state.apply(s);
  return state;
}

describe('agent session workflow state', () => {
  it('starts open and pending with nothing ingested', () => {
    assert.deepEqual(new SessionState().view, {
      processedThroughSequence: null,
      highestSequence: null,
      status: 'open',
      processingStatus: 'pending',
      waitingForSequence: null,
      ingests: 0,
    });
  });

  it('keeps the highest sequence as the maximum of the signals', () => {
    const state = fold(signal({ highestSequence: 4 }), signal({ highestSequence: 9 }), signal({ highestSequence: 2 }));
    assert.equal(state.view.highestSequence, 9);
  });

  it('takes the first sequence it sees, also when it is 0', () => {
    assert.equal(fold(signal({ highestSequence: 0 })).view.highestSequence, 0);
    assert.equal(fold(signal({ highestSequence: 0 }), signal({ highestSequence: null })).view.highestSequence, 0);
  });

  it('ignores a null highest sequence', () => {
    assert.equal(fold(signal({ highestSequence: null })).view.highestSequence, null);
    assert.equal(fold(signal({ highestSequence: 7 }), signal({ highestSequence: null })).view.highestSequence, 7);
    assert.equal(fold(signal({ highestSequence: null }), signal({ highestSequence: 3 })).view.highestSequence, 3);
  });

  it('moves from open to a terminal status', () => {
    assert.equal(fold(signal(), signal({ status: 'ended' })).view.status, 'ended');
    assert.equal(fold(signal({ status: 'abandoned' })).view.status, 'abandoned');
  });

  it('never leaves a terminal status, also when an open signal comes after ended', () => {
    assert.equal(fold(signal({ status: 'ended' }), signal({ status: 'open' })).view.status, 'ended');
    assert.equal(fold(signal({ status: 'abandoned' }), signal({ status: 'open' })).view.status, 'abandoned');
  });

  it('keeps the first terminal status when another terminal status follows', () => {
    assert.equal(fold(signal({ status: 'ended' }), signal({ status: 'abandoned' })).view.status, 'ended');
    assert.equal(fold(signal({ status: 'abandoned' }), signal({ status: 'ended' })).view.status, 'abandoned');
  });

  it('follows the latest processing status', () => {
    const state = fold(signal({ processingStatus: 'billing_blocked' }));
    assert.equal(state.view.processingStatus, 'billing_blocked');
    state.apply(signal({ processingStatus: 'capture_disabled' }));
    assert.equal(state.view.processingStatus, 'capture_disabled');
    state.apply(signal({ processingStatus: 'pending', status: 'ended' }));
    assert.equal(state.view.processingStatus, 'pending');
    state.apply(signal({ processingStatus: 'billing_blocked', status: 'open' }));
    assert.equal(state.view.processingStatus, 'billing_blocked');
  });

  it('counts ingests', () => {
    const state = fold(signal(), signal({ highestSequence: 2 }), signal({ status: 'ended' }));
    assert.equal(state.view.ingests, 3);
    state.apply(signal({ status: 'open' }));
    assert.equal(state.view.ingests, 4);
  });

  it('folds a whole session', () => {
    const state = fold(
      signal({ highestSequence: 2 }),
      signal({ highestSequence: 5, processingStatus: 'billing_blocked' }),
      signal({ highestSequence: 6, status: 'ended' }),
      signal({ highestSequence: null, status: 'open', processingStatus: 'pending' }),
    );
    assert.deepEqual(state.view, {
      processedThroughSequence: null,
      highestSequence: 6,
      status: 'ended',
      processingStatus: 'pending',
      waitingForSequence: null,
      ingests: 4,
    });
  });

  describe('planning: the contiguous watermark', () => {
    const refs = (...sequences: number[]): EventRef[] => sequences.map((sequence) => ({ sequence, revision: 1 }));
    const seqs = (plan: { process: EventRef[] }) => plan.process.map((e) => e.sequence);

    it('starts at sequence 1 or 0 and advances through contiguous sequences', () => {
      const state = fold(signal({ highestSequence: 3 }));
      const plan = planProcessing(state.snapshot(), refs(1, 2, 3));
      assert.deepEqual([seqs(plan), plan.processedThroughSequence, plan.waitingFor], [[1, 2, 3], 3, null]);
      const zero = planProcessing(fold(signal({ highestSequence: 2 })).snapshot(), refs(0, 1, 2));
      assert.deepEqual([seqs(zero), zero.processedThroughSequence], [[0, 1, 2], 2]);
    });

    it('waits at the first gap while the session is open', () => {
      const state = fold(signal({ highestSequence: 6 }));
      const plan = planProcessing(state.snapshot(), refs(1, 2, 4, 5, 6));
      assert.deepEqual([seqs(plan), plan.processedThroughSequence, plan.waitingFor], [[1, 2], 2, 3]);
      state.advance(plan);
      assert.deepEqual([state.processedThroughSequence, state.view.waitingForSequence, state.caughtUp], [2, 3, false]);
      // Still missing: nothing more; the gap filled: everything after it.
      assert.deepEqual(seqs(planProcessing(state.snapshot(), refs(4, 5, 6))), []);
      const filled = planProcessing(state.snapshot(), refs(3, 4, 5, 6));
      assert.deepEqual([seqs(filled), filled.processedThroughSequence, filled.waitingFor], [[3, 4, 5, 6], 6, null]);
      state.advance(filled);
      assert.equal(state.caughtUp, true);
    });

    it('waits for sequence 1 when a session starts later', () => {
      const plan = planProcessing(fold(signal({ highestSequence: 5 })).snapshot(), refs(3, 4, 5));
      assert.deepEqual([seqs(plan), plan.processedThroughSequence, plan.waitingFor], [[], null, 1]);
    });

    it('goes through permanent gaps once the session is ended or abandoned', () => {
      for (const status of ['ended', 'abandoned'] as const) {
        const state = fold(signal({ highestSequence: 9, status }));
        state.processedThroughSequence = 2;
        const plan = planProcessing(state.snapshot(), refs(4, 7, 9));
        assert.deepEqual([seqs(plan), plan.processedThroughSequence, plan.waitingFor], [[4, 7, 9], 9, null]);
        state.advance(plan);
        assert.deepEqual([state.caughtUp, state.view.waitingForSequence], [true, null]);
      }
    });

    it('processes revisions below the watermark at once, also while waiting at a gap', () => {
      const state = fold(signal({ highestSequence: 8 }));
      state.processedThroughSequence = 5;
      const plan = planProcessing(state.snapshot(), [{ sequence: 2, revision: 3 }, ...refs(7, 8)]);
      assert.deepEqual([plan.process, plan.processedThroughSequence, plan.waitingFor], [[{ sequence: 2, revision: 3 }], 5, 6]);
    });

    it('never moves the watermark back', () => {
      const state = fold(signal({ highestSequence: 4 }));
      state.processedThroughSequence = 4;
      state.advance({ processedThroughSequence: 2, waitingFor: null });
      assert.equal(state.processedThroughSequence, 4);
    });

    it('loads the stored progress and carries it over continue-as-new', () => {
      const state = new SessionState();
      state.load({ status: 'ended', processingStatus: 'billing_blocked', processedThroughSequence: 7, highestSequence: 9 });
      assert.deepEqual(
        [state.processedThroughSequence, state.highestSequence, state.status, state.processingStatus, state.terminal],
        [7, 9, 'ended', 'billing_blocked', true],
      );
      const next = new SessionState(state.carry());
      assert.deepEqual(next.view, state.view);
      assert.equal(next.dirty, true, 'a new run looks for pending events first');
      // A terminal status in memory survives an older stored one.
      next.load({ status: 'open', processingStatus: 'pending', processedThroughSequence: 3, highestSequence: 4 });
      assert.deepEqual([next.status, next.processedThroughSequence, next.highestSequence], ['ended', 7, 9]);
    });
  });
});
