import { strict as assert } from 'node:assert';
import { WebhookWakes } from '../../../src/webhooks/wakes.js';

describe('WebhookWakes (sender calls lingering for their process’s wakes)', () => {
  it('offers a wake only to an endpoint with a call running here', async () => {
    const wakes = new WebhookWakes();
    assert.equal(wakes.offer('e1'), false);
    const call = wakes.enter('e1');
    assert.equal(wakes.offer('e2'), false);
    const waiting = call.wait(60_000);
    assert.equal(wakes.offer('e1'), true);
    assert.equal(await waiting, true);
    call.leave();
    assert.equal(wakes.offer('e1'), false);
  });

  it('keeps a wake that comes while the call is not waiting, until the call looks again', async () => {
    const wakes = new WebhookWakes();
    const call = wakes.enter('e1');
    assert.equal(wakes.offer('e1'), true);
    assert.equal(await call.wait(60_000), true, 'answered at once');
    assert.equal(await call.wait(10), false, 'taken by that answer');
    wakes.offer('e1');
    call.take();
    assert.equal(await call.wait(10), false, 'answered by the look that take() announced');
    call.leave();
  });

  it('ends a wait after its time or on abort, and counts calls of one endpoint', async () => {
    const wakes = new WebhookWakes();
    const a = wakes.enter('e1');
    const b = wakes.enter('e1');
    assert.equal(await a.wait(5), false);
    const stop = new AbortController();
    const waiting = b.wait(60_000, stop.signal);
    stop.abort();
    assert.equal(await waiting, false);
    assert.equal(await b.wait(60_000, stop.signal), false, 'already aborted');
    a.leave();
    a.leave();
    assert.equal(wakes.offer('e1'), true, 'b still runs');
    b.leave();
    assert.equal(wakes.offer('e1'), false);
  });
});
