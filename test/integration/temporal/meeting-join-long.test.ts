import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { MeetingActivities } from '../../../activities/meeting-joins.js';
import type { BotStatus } from '../../../src/providers/recorder/types.js';
import { MEETING_JOIN_WORKFLOW, type MeetingJoinInput, type MeetingJoinResult } from '../../../workflows/meeting-join/contract.js';
import { POLLS_PER_RUN } from '../../../workflows/meeting-join/workflow.js';
import { workflowBundle } from '../../../harness/stack.js';
import { workflowSinks } from '../../../src/temporal/tracing.js';
import { startTimeSkippingEnv } from '../../helpers/time-skipping.js';

/**
 * The meeting-join workflow over days of workflow time, on Temporal's time-skipping test server:
 * the recorder is a script (the workflow is under test, not the provider), every other part is real.
 */
describe('meeting join: long meetings and every way out', function () {
  this.timeout(300_000);
  let env: TestWorkflowEnvironment;

  before(async () => {
    env = await startTimeSkippingEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  interface Calls {
    leaves: string[];
    failed: [string, string][];
    runs: Set<string>;
    polls: number;
  }

  /** A recorder whose bot records until told to leave, as `pollBot` says (or fails on demand). */
  async function run(input: Partial<MeetingJoinInput>, pollBot: (calls: Calls) => BotStatus, act?: (id: string) => Promise<void>) {
    const calls: Calls = { leaves: [], failed: [], runs: new Set(), polls: 0 };
    const activities: Partial<MeetingActivities> = {
      createMeetingRecording: async () => undefined,
      createBot: async () => ({ botId: 'bot-1' }),
      discardMeetingRecording: async () => undefined,
      pollBot: async () => {
        calls.runs.add(Context.current().info.workflowExecution?.runId ?? '');
        calls.polls += 1;
        return pollBot(calls);
      },
      leaveBot: async (botId: string) => void calls.leaves.push(botId),
      failMeeting: async (recordingId: string, reason: string) => void calls.failed.push([recordingId, reason]),
    };
    const taskQueue = `meeting-long-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      activities,
      workflowBundle: await workflowBundle(),
      sinks: workflowSinks(),
    });
    const recordingId = randomUUID();
    const workflowId = `meeting-join/long/${recordingId}`;
    const full: MeetingJoinInput = {
      version: 1,
      organizationId: randomUUID(),
      userId: randomUUID(),
      recordingId,
      platform: 'zoom',
      meetingIdentity: `zoom:${recordingId}`,
      joinUrl: 'https://zoom.us/j/84211234567?pwd=secret',
      botName: 'Bot',
      pollSeconds: 60,
      maxHours: 48,
      ...input,
    };
    const wallStarted = performance.now();
    const outcome = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(MEETING_JOIN_WORKFLOW, { workflowId, taskQueue, args: [full] });
      if (act) await act(workflowId);
      return handle.result().then(
        (r) => r as MeetingJoinResult,
        (e: unknown) => e,
      );
    });
    const wallSeconds = (performance.now() - wallStarted) / 1000;
    const events = await Promise.all(
      [...calls.runs].map(async (runId) => (await env.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? []),
    );
    // Workflow time from the histories themselves: the test server may skip ahead once nothing runs.
    const times = events.flat().map((e) => Number(e.eventTime?.seconds ?? 0) * 1000);
    const hours = (Math.max(...times) - Math.min(...times)) / 3600_000;
    return { outcome, calls, histories: events.map((e) => e.length), hours, wallSeconds, recordingId };
  }

  it('follows a 48-hour meeting to its end across continue-as-new runs, each history bounded, then the bot leaves', async () => {
    const { outcome, calls, histories, hours, wallSeconds, recordingId } = await run({}, () => ({ state: 'recording' }));
    assert.deepEqual(outcome, { state: 'failed', reason: 'max_duration' });
    assert.ok(hours >= 48 && hours < 49, `${hours} h of workflow time`);
    const runs = Math.ceil((48 * 60) / POLLS_PER_RUN);
    assert.equal(calls.runs.size, runs, 'the runs continued as new');
    // One poll a minute for 48 hours, and one as each run begins; never more. The test server's clock
    // runs in real time while anything runs (it skips only when nothing does), so the seconds the
    // 2,880 polls and their workflow tasks take carry the last polls past the deadline: at most one
    // poll fewer per minute of the run's wall time, and one more for a part of a minute (a run in
    // three shards on this 2-core machine lost two).
    const expected = 48 * 60 + runs;
    const fewest = expected - Math.ceil(wallSeconds / 60) - 1;
    assert.ok(
      calls.polls <= expected && calls.polls >= fewest,
      `${calls.polls} polls, expected ${expected} (at least ${fewest} after ${wallSeconds.toFixed(0)} s of wall time)`,
    );
    for (const events of histories) assert.ok(events < 12 * POLLS_PER_RUN, `a run's history holds ${events} events`);
    assert.deepEqual(calls.leaves, ['bot-1']);
    assert.deepEqual(calls.failed, [[recordingId, 'max_duration']]);
  });

  it('polling that exhausts its retries fails the recording and tells the bot to leave', async () => {
    const { outcome, calls, recordingId } = await run({ pollSeconds: 5 }, (c) => {
      if (c.polls === 1) return { state: 'recording' };
      throw ApplicationFailure.retryable('provider answers 503', 'provider_unavailable');
    });
    assert.deepEqual(outcome, { state: 'failed', reason: 'recorder_unreachable' });
    assert.equal(calls.polls, 1 + 30, 'the poll was tried 30 times');
    assert.deepEqual(calls.leaves, ['bot-1']);
    assert.deepEqual(calls.failed, [[recordingId, 'recorder_unreachable']]);
  });

  it('a cancelled run fails the recording and tells the bot to leave', async () => {
    const { outcome, calls, recordingId } = await run(
      {},
      () => ({ state: 'recording' }),
      async (workflowId) => {
        await env.sleep('2 hours');
        await env.client.workflow.getHandle(workflowId).cancel();
      },
    );
    assert.ok(outcome instanceof WorkflowFailedError, String(outcome));
    assert.deepEqual(calls.leaves, ['bot-1']);
    assert.deepEqual(calls.failed, [[recordingId, 'cancelled']]);
  });
});
