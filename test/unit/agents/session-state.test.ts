import { strict as assert } from 'node:assert';
import {
  billingEvents,
  billingTransition,
  effectiveProcessingStatus,
  passSettles,
  processingStatusAfterAnalysis,
  processingStatusAfterIngest,
} from '../../../src/domain/agent-session-state.js';

/** The agent session's state machine (issue 30, point 7): the decisions the repositories store. */
describe('agent session state', () => {
  it('an ingest: capture off is capture_disabled; otherwise billing_blocked exactly while the balance cannot pay one analysis', () => {
    const at = (captureContent: boolean, creditBalance: number) =>
      processingStatusAfterIngest({ captureContent, creditBalance, analysisCreditCost: 3 });
    assert.deepEqual(
      [at(false, 0), at(false, 100), at(true, 2), at(true, 3), at(true, 100)],
      ['capture_disabled', 'capture_disabled', 'billing_blocked', 'pending', 'pending'],
    );
  });

  it('an analysis round moves between pending and billing_blocked', () => {
    assert.deepEqual([processingStatusAfterAnalysis(true), processingStatusAfterAnalysis(false)], ['billing_blocked', 'pending']);
  });

  it('the never-written legacy statuses read as pending', () => {
    assert.deepEqual(['pending', 'processing', 'completed', 'billing_blocked', 'capture_disabled'].map(effectiveProcessingStatus), [
      'pending',
      'pending',
      'pending',
      'billing_blocked',
      'capture_disabled',
    ]);
  });

  it('announces entering billing_blocked and leaving it for pending, nothing else', () => {
    const cases: [string, string, string | null][] = [
      ['pending', 'billing_blocked', 'agent_session.billing_blocked'],
      ['capture_disabled', 'billing_blocked', 'agent_session.billing_blocked'],
      ['processing', 'billing_blocked', 'agent_session.billing_blocked'],
      ['billing_blocked', 'pending', 'agent_session.billing_resumed'],
      ['billing_blocked', 'billing_blocked', null],
      ['billing_blocked', 'capture_disabled', null],
      ['pending', 'pending', null],
      ['capture_disabled', 'pending', null],
    ];
    for (const [before, after, event] of cases) assert.equal(billingTransition(before, after), event, `${before} -> ${after}`);
    const change = { sessionId: 's', organizationId: 'o', applicationId: 'a' };
    assert.deepEqual(
      billingEvents([
        { ...change, before: 'pending', after: 'billing_blocked' },
        { ...change, before: 'pending', after: 'pending' },
      ]),
      [{ type: 'agent_session.billing_blocked', organizationId: 'o', subjectId: 's', payload: { sessionId: 's', applicationId: 'a' } }],
    );
  });

  it("a pass takes the wake with nothing more to process, and a drainer's pass only with no analysis it would run next", () => {
    const pass = (more: boolean, holdWakeWhileQueued: boolean, queued: number, holdTold: boolean) =>
      passSettles({ more, holdWakeWhileQueued, queued, holdTold });
    assert.equal(pass(true, false, 0, false), false, 'another page first');
    assert.equal(pass(false, false, 5, false), true, "the workflow's pass: its analyses are durable in its history");
    assert.equal(pass(false, true, 5, false), false, "the drainer's pass keeps the wake while it runs the analyses next");
    assert.equal(pass(false, true, 5, true), true, 'unless the workflow was told of a hold and runs them');
    assert.equal(pass(false, true, 0, false), true);
  });
});
