import { strict as assert } from 'node:assert';
import type { BotStatus, MeetingJoinInput } from '../../../workflows/meeting-join/contract.js';
import { endingOf, MeetingJoinState, POLLS_PER_RUN } from '../../../workflows/meeting-join/state.js';

function input(overrides: Partial<MeetingJoinInput> = {}): MeetingJoinInput {
  return {
    organizationId: 'org',
    userId: 'user',
    recordingId: 'rec',
    platform: 'google_meet',
    meetingIdentity: 'abc-defg-hij',
    joinUrl: 'https://meet.google.com/abc-defg-hij',
    botName: 'Intake',
    pollSeconds: 5,
    maxHours: 2,
    ...overrides,
  };
}

const at = (state: BotStatus['state']): BotStatus => ({ state });

describe('meeting-join workflow state', () => {
  it('waits for the recorder before the update answers, then answers the recording', () => {
    const state = new MeetingJoinState(input());
    assert.equal(state.answered, false);
    assert.throws(() => state.answer(), /not answered/);
    assert.deepEqual(state.view(), { recordingId: 'rec', botState: 'creating' });
    state.botCreated();
    assert.equal(state.answered, true);
    assert.deepEqual(state.answer(), { recordingId: 'rec' });
  });

  it("answers the recorder's failure when the bot was not created", () => {
    const state = new MeetingJoinState(input());
    state.botNotCreated('meeting_not_found');
    assert.deepEqual(state.answer(), { error: 'meeting_not_found' });
  });

  it('a continued run starts accepted, where the previous run left the bot', () => {
    const state = new MeetingJoinState(input({ resume: { botId: 'bot', botState: 'in_call', deadline: 1, run: 2 } }));
    assert.deepEqual(state.answer(), { recordingId: 'rec' });
    assert.deepEqual(state.view(), { recordingId: 'rec', botState: 'in_call' });
    assert.equal(state.observe(at('in_call')), false);
  });

  it('shows a state only when it changes', () => {
    const state = new MeetingJoinState(input());
    assert.equal(state.observe(at('joining')), true);
    assert.equal(state.observe(at('joining')), false);
    assert.equal(state.observe(at('recording')), true);
    assert.equal(state.view().botState, 'recording');
  });

  it('asks the bot to leave maxHours after it was created', () => {
    const state = new MeetingJoinState(input({ maxHours: 2 }));
    const deadline = state.deadlineFrom(1_000);
    assert.equal(deadline, 1_000 + 2 * 3600_000);
    assert.equal(state.next(at('recording'), { now: deadline - 1, deadline, bounded: true }), 'wait');
    assert.equal(state.next(at('recording'), { now: deadline, deadline, bounded: true }), 'leave');
  });

  it('ends on done or failed, before the deadline is looked at', () => {
    const state = new MeetingJoinState(input());
    assert.equal(state.next(at('done'), { now: 10, deadline: 0, bounded: true }), 'ended');
    assert.equal(state.next(at('failed'), { now: 10, deadline: 0, bounded: true }), 'ended');
  });

  it('continues as new after POLLS_PER_RUN polls, carrying the bot, its deadline and the run count', () => {
    const state = new MeetingJoinState(input({ resume: { botId: 'bot', botState: 'in_call', deadline: 99, run: 3 } }));
    const steps = Array.from({ length: POLLS_PER_RUN }, () => state.next(at('in_call'), { now: 0, deadline: 99, bounded: true }));
    assert.equal(steps.filter((s) => s === 'wait').length, POLLS_PER_RUN - 1);
    assert.equal(steps.at(-1), 'continue_as_new');
    assert.deepEqual(state.resume('bot', at('recording'), 99), { botId: 'bot', botState: 'recording', deadline: 99, run: 4 });
    assert.equal(new MeetingJoinState(input()).resume('b', at('joining'), 5).run, 2);
  });

  it('runs started before the bounded-history patch never continue as new', () => {
    const state = new MeetingJoinState(input());
    for (let i = 0; i < POLLS_PER_RUN + 5; i++) assert.equal(state.next(at('in_call'), { now: 0, deadline: 1, bounded: false }), 'wait');
  });

  it('hands over the media of a done bot; anything else fails the recording with its reason', () => {
    const media = { kind: 'url' as const, url: 'https://recorder.example/r.mp4' };
    assert.deepEqual(endingOf({ state: 'done', media }), { media });
    assert.deepEqual(endingOf({ state: 'done' }), { failed: 'no_recording' });
    assert.deepEqual(endingOf({ state: 'failed', reason: 'denied', media }), { failed: 'denied' });
    assert.deepEqual(endingOf({ state: 'failed' }), { failed: 'no_recording' });
  });
});
