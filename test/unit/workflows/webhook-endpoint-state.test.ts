import { strict as assert } from 'node:assert';
import { MIN_WAIT_MS, nextStep } from '../../../workflows/webhook-endpoint/state.js';

describe('webhook endpoint workflow: the next step after a call', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(now + ms).toISOString();
  const idle = 600_000;

  it('ends for a deleted endpoint; waits for a wake, ending when quiet, for a disabled one or with nothing pending', () => {
    assert.deepEqual(nextStep({ endpoint: 'gone', attempted: 0, more: false, nextDueAt: null }, now, idle), { kind: 'end' });
    assert.deepEqual(nextStep({ endpoint: 'disabled', attempted: 3, more: false, nextDueAt: null }, now, idle), {
      kind: 'wait',
      ms: idle,
      endIfQuiet: true,
    });
    assert.deepEqual(nextStep({ endpoint: 'active', attempted: 2, more: false, nextDueAt: null }, now, idle), {
      kind: 'wait',
      ms: idle,
      endIfQuiet: true,
    });
  });

  it('calls again at once when more is due, sleeps until the next retry otherwise, never in a hot loop', () => {
    assert.deepEqual(nextStep({ endpoint: 'active', attempted: 50, more: true, nextDueAt: at(0) }, now, idle), { kind: 'now' });
    // A delivery unblocked by the one just sent (same subject) is due already.
    assert.deepEqual(nextStep({ endpoint: 'active', attempted: 1, more: false, nextDueAt: at(-10) }, now, idle), { kind: 'now' });
    assert.deepEqual(nextStep({ endpoint: 'active', attempted: 1, more: false, nextDueAt: at(5_000) }, now, idle), {
      kind: 'wait',
      ms: 5_000,
      endIfQuiet: false,
    });
    assert.deepEqual(nextStep({ endpoint: 'active', attempted: 0, more: false, nextDueAt: at(-10) }, now, idle), {
      kind: 'wait',
      ms: MIN_WAIT_MS,
      endIfQuiet: false,
    });
  });
});
