import { strict as assert } from 'node:assert';
import type { EventsIngested } from '../../../workflows/agent-session/contract.js';
import { SessionState } from '../../../workflows/agent-session/state.js';

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
    assert.deepEqual(new SessionState().view, { highestSequence: null, status: 'open', processingStatus: 'pending', ingests: 0 });
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
    assert.deepEqual(state.view, { highestSequence: 6, status: 'ended', processingStatus: 'pending', ingests: 4 });
  });
});
