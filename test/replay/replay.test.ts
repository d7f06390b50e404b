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
import { saveHistory } from './save-history.js';

const DIR = path.join(PROJECT_ROOT, 'test', 'replay', 'histories');
const ALTERED = path.join(PROJECT_ROOT, 'test', 'replay', 'altered');
const dataConverter = testDataConverter();
// The bundle's OpenTelemetry interceptors call their sink (not during replay, but it must be registered).
const sinks = workflowSinks();
// <workflow>/<scenario>.json: the folder is the workflow's folder in workflows/.
const files = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(path.join(DIR, d.name))
      .filter((f) => f.endsWith('.json'))
      .map((f) => `${d.name}/${f}`),
  )
  .sort();
/** `agent-session` → `agentSessionWorkflow`, the name workflows/index.ts exports it under. */
const workflowOfFolder = (folder: string) => `${folder.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}Workflow`;

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

  it('keeps each history in the folder of its workflow', () => {
    for (const file of files) {
      const type = load(file).events[0]?.workflowExecutionStartedEventAttributes?.workflowType.name;
      assert.equal(type, workflowOfFolder(path.dirname(file)), file);
    }
  });

  for (const file of files) {
    it(`replays ${file} without a determinism violation`, async () => {
      // Histories captured since payloads are encrypted need the test configuration's codec; older ones pass through it.
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks, replayName: file, dataConverter }, load(file));
    });
  }

  it('capture refuses to overwrite a stored history', async () => {
    const before = readFileSync(path.join(DIR, 'diagnostics', 'v1.json'), 'utf8');
    // The file exists, so capture stops before it asks the handle for anything.
    const handle = {} as Parameters<typeof saveHistory>[2];
    await assert.rejects(saveHistory('diagnostics', 'v1', handle), /test\/replay\/histories\/diagnostics\/v1\.json exists/);
    assert.equal(readFileSync(path.join(DIR, 'diagnostics', 'v1.json'), 'utf8'), before);
  });

  it('fails on a deliberately broken history (proves the check can fail)', async () => {
    const history = load('diagnostics/v1.json');
    const scheduled = history.events.find((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(scheduled?.activityTaskScheduledEventAttributes);
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'someOtherActivity';
    await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks }, history), DeterminismViolationError);
  });

  it('fails on the stored, deliberately altered agent session history (an activity renamed)', async () => {
    const altered = load('agent-session/gap-end.json', ALTERED);
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks, replayName: 'altered' }, altered),
      (error: unknown) => error instanceof DeterminismViolationError && /analyseQueued/.test(error.message),
    );
  });
});
