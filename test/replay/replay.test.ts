import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { PROJECT_ROOT } from '../../src/paths.js';
import * as workflows from '../../workflows/index.js';
import { workflowBundle } from '../../harness/stack.js';
import { testDataConverter } from '../../harness/config.js';
import { workflowSinks } from '../../src/temporal/tracing.js';

const DIR = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');
const ALTERED = path.join(PROJECT_ROOT, 'test', 'replay', 'altered');
const dataConverter = testDataConverter();
// The bundle's OpenTelemetry interceptors call their sink (not during replay, but it must be registered).
const sinks = workflowSinks();
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

interface HistoryJson {
  events: {
    eventType: string;
    workflowExecutionStartedEventAttributes?: { workflowType: { name: string } };
    activityTaskScheduledEventAttributes?: { activityType: { name: string } };
  }[];
}

function load(file: string, dir = DIR): HistoryJson {
  return JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as HistoryJson;
}

/** Stored histories must replay against today's workflow code: a non-deterministic change fails CI. */
describe('workflow replay', function () {
  this.timeout(60_000);

  it('has at least one stored history per workflow', () => {
    const types = new Set(files.map((f) => load(f).events[0]?.workflowExecutionStartedEventAttributes?.workflowType.name));
    for (const name of Object.keys(workflows)) assert.ok(types.has(name), `no stored history for ${name}: capture one`);
  });

  for (const file of files) {
    it(`replays ${file} without a determinism violation`, async () => {
      // Histories captured since payloads are encrypted need the test configuration's codec; older ones pass through it.
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks, replayName: file, dataConverter }, load(file));
    });
  }

  it('fails on a deliberately broken history (proves the check can fail)', async () => {
    const history = load('diagnostics-v1.json');
    const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(scheduled?.activityTaskScheduledEventAttributes);
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'someOtherActivity';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks }, history), DeterminismViolationError);
  });

  it('fails on the stored, deliberately altered agent session history (an activity renamed)', async () => {
    const altered = load('agent-session-gap-end-altered.json', ALTERED);
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks, replayName: 'altered' }, altered),
      (error: unknown) => error instanceof DeterminismViolationError && /analyseQueued/.test(error.message),
    );
  });
});
