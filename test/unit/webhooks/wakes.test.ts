import { strict as assert } from 'node:assert';
import { parsePresence, presencePayload, WebhookWakes } from '../../../src/webhooks/wakes.js';

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

  it('leave() answers whether a wake came since the call last looked', () => {
    const wakes = new WebhookWakes();
    const call = wakes.enter('e1');
    call.take();
    wakes.offer('e1');
    assert.equal(call.leave(), true, 'no look answered it');
    assert.equal(call.leave(), false, 'left already');
    const other = wakes.enter('e2');
    wakes.offer('e2');
    other.take();
    assert.equal(other.leave(), false, 'the look that take() announced answers it');
  });

  it('knows the calls other processes announce, until they end or their time passes, and ignores its own', () => {
    let now = 1_000;
    const wakes = new WebhookWakes({ processId: 'here', now: () => now });
    wakes.noteAnnouncement({ endpointId: 'e1', processId: 'there', untilMs: 5_000 });
    wakes.noteAnnouncement({ endpointId: 'e2', processId: 'here', untilMs: 5_000 });
    assert.equal(wakes.runsElsewhere('e1'), true);
    assert.equal(wakes.runsElsewhere('e2'), false, 'its own call is in calls, not here');
    // An end announced by another process than the one whose call is known leaves it.
    wakes.noteAnnouncement({ endpointId: 'e1', processId: 'a third', untilMs: 0 });
    assert.equal(wakes.runsElsewhere('e1'), true);
    wakes.noteAnnouncement({ endpointId: 'e1', processId: 'there', untilMs: 0 });
    assert.equal(wakes.runsElsewhere('e1'), false);
    // A call whose end is never heard (its process died) counts until its time.
    wakes.noteAnnouncement({ endpointId: 'e3', processId: 'there', untilMs: 5_000 });
    now = 5_000;
    assert.equal(wakes.runsElsewhere('e3'), false);
    wakes.noteAnnouncement({ endpointId: 'e4', processId: 'there', untilMs: 4_000 });
    assert.equal(wakes.runsElsewhere('e4'), false, 'announced past its time');
    wakes.noteAnnouncement({ endpointId: 'e5', processId: 'there', untilMs: 9_000 });
    now = 9_000;
    wakes.prune();
    assert.equal(wakes.runsElsewhere('e5'), false);
  });

  it('reads back the announcements it writes, and nothing else', () => {
    const a = { endpointId: '6b0e2d4c-0000-4000-8000-000000000001', processId: 'p', untilMs: 123 };
    assert.deepEqual(parsePresence(presencePayload(a)), a);
    for (const bad of ['', 'x', '[]', '["e","p"]', '["e","p","1"]', '{"endpointId":"e"}', '[1,"p",2]'])
      assert.equal(parsePresence(bad), null, bad);
  });
});
