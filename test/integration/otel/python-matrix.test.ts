import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { agentContext, type AgentContext, type TestAgentApp } from '../../../harness/agents.js';
import { eventually } from '../../../harness/wait.js';
import { agentSessionOf, CHAT_PY_CONVERSATION } from '../../helpers/otel.js';
import { PROJECT_ROOT } from '../../../src/paths.js';

const run = promisify(execFile);
const MATRIX = path.join(PROJECT_ROOT, 'test', 'otel-matrix');

/**
 * The instrumentations' own packages from PyPI (test/otel-matrix/requirements.txt, pinned), installed
 * into .tools/otel-matrix-<version> on first use, as `.ci/run` installs them.
 */
export async function otelMatrixTarget(): Promise<string> {
  const version = /^# version (\S+)/m.exec(readFileSync(path.join(MATRIX, 'requirements.txt'), 'utf8'))?.[1];
  assert.ok(version, 'test/otel-matrix/requirements.txt names its version');
  const target = path.join(PROJECT_ROOT, '.tools', `otel-matrix-${version}`);
  if (!existsSync(path.join(target, '.installed'))) {
    await run(
      'python3',
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', target, '-r', path.join(MATRIX, 'requirements.txt')],
      { timeout: 900_000 },
    );
    await run('touch', [path.join(target, '.installed')]);
  }
  return target;
}

/**
 * The compatibility matrix from PyPI (issue 35, point 3): each instrumentation, as its package
 * emits, on the OpenAI Python client talking to a local fake OpenAI-compatible server, exports one
 * conversation of two model calls to the running stack over OTLP/HTTP, unchanged. Each must give the
 * same session: the two questions and the two answers, in order, and not the system prompt.
 */
describe('OTLP ingest: the PyPI instrumentations, run as published, give the conversation (issue 35, compatibility matrix)', function () {
  this.timeout(900_000);
  let t: AgentContext;
  let app: TestAgentApp;
  let target: string;

  before(async () => {
    target = await otelMatrixTarget();
    t = await agentContext();
    app = await t.newApp();
  });
  after(async () => {
    await t?.close();
  });

  async function conversation(kind: string): Promise<string[][]> {
    const id = `matrix-${kind}-${randomUUID()}`;
    await run('python3', [path.join(MATRIX, 'chat.py'), kind], {
      timeout: 120_000,
      env: {
        PATH: process.env.PATH ?? '',
        PYTHONPATH: target,
        INTAKE_OTLP_ENDPOINT: `${t.api.url}/otel`,
        INTAKE_SECRET: app.secret,
        CONVERSATION: id,
        OTEL_PYTHON_LOG_LEVEL: 'error',
      },
    });
    const session = await eventually(
      () => agentSessionOf(t.api, { apiKey: t.org.apiKey, applicationId: app.app.id }, id),
      (found) => found !== null,
    );
    assert.ok(session, `no session ${id}`);
    return session.events.map((e) => [e.type, e.content]);
  }

  for (const [kind, what] of [
    ['openllmetry', 'OpenLLMetry (opentelemetry-instrumentation-openai): gen_ai.prompt.* / gen_ai.completion.* span attributes'],
    ['openinference', 'OpenInference (openinference-instrumentation-openai): llm.input_messages.* / llm.output_messages.* span attributes'],
    ['openai-v2', 'OpenTelemetry contrib (opentelemetry-instrumentation-openai-v2): gen_ai.* events as log records (1.26–1.36)'],
    ['openai-v2-latest', 'OpenTelemetry contrib, newest conventions: gen_ai.client.inference.operation.details (1.37+)'],
  ] as const) {
    it(what, async () => {
      assert.deepEqual(await conversation(kind), CHAT_PY_CONVERSATION);
    });
  }
});
