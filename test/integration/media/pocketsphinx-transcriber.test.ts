import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/paths.js';
import { ConfigError } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import { startWorker } from '../../../src/main/worker.js';
import { FfmpegTools } from '../../../src/media/ffmpeg-tools.js';
import {
  createTranscriber,
  ensurePocketSphinx,
  PocketSphinxTranscriber,
  TranscriberError,
  transcriberUnusable,
} from '../../../src/providers/transcriber/index.js';
import { testConfig } from '../../../harness/config.js';

const SPEECH = path.join(PROJECT_ROOT, 'samples', 'librivox-sense-and-sensibility-0870.flac');
const REFERENCE = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them';

/** The built-in offline engine (PyPI pocketsphinx and its model, installed into .tools/) on real read speech. */
describe('offline transcriber (PocketSphinx)', function () {
  this.timeout(300_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-sphinx-test-'));
    await ensurePocketSphinx();
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('transcribes 7 s of read English into timed utterances that share most words with the reference', async () => {
    const utterances = await new PocketSphinxTranscriber().transcribe(SPEECH);
    assert.ok(utterances.length >= 1);
    for (const u of utterances) {
      assert.equal(u.speaker, 0);
      assert.ok(u.startSec >= 0 && u.endSec >= u.startSec && u.endSec <= 7.5, JSON.stringify(u));
      assert.match(u.text, /^[a-z' ]+$/, 'words only: no fillers, no alternate-pronunciation marks');
    }
    const heard = new Set(utterances.flatMap((u) => u.text.split(' ')));
    const reference = REFERENCE.split(' ');
    const found = reference.filter((w) => heard.has(w)).length / reference.length;
    assert.ok(
      found >= 0.5,
      `only ${Math.round(found * 100)}% of the reference words were heard: ${utterances.map((u) => u.text).join(' / ')}`,
    );
    assert.ok(heard.has('leisure') && heard.has('consider') && heard.has('power'));
  });

  it("runs Python without the worker's secrets: only PATH, HOME, locale, TMPDIR, pyenv's and its own variables (issue 50)", async () => {
    // A stand-in engine that writes the environment it was given, then fails the import.
    const fake = path.join(dir, 'fake-engine');
    await mkdir(path.join(fake, 'pocketsphinx'), { recursive: true });
    const seen = path.join(fake, 'env.json');
    await writeFile(
      path.join(fake, 'pocketsphinx', '__init__.py'),
      `import json, os\nopen(${JSON.stringify(seen)}, "w").write(json.dumps(dict(os.environ)))\nraise ImportError("stand-in")\n`,
    );
    const secrets = {
      DATABASE_URL: 'postgres://intake:hunter2@db/intake',
      SIGNING_SECRET: 'a-signing-secret',
      INTAKE_TEST_MARKER: 'marker',
    };
    const saved = Object.fromEntries(Object.keys(secrets).map((k) => [k, process.env[k]]));
    Object.assign(process.env, secrets);
    try {
      const error = await new PocketSphinxTranscriber({ dir: fake }).transcribe(SPEECH).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof TranscriberError, String(error));
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const env = JSON.parse(await readFile(seen, 'utf8')) as Record<string, string>;
    assert.equal(env.PYTHONPATH, fake);
    // pyenv's shim (where python3 is one) adds PYENV_* of its own; Python may add LC_CTYPE.
    const allowed = new Set([
      'PATH',
      'HOME',
      'LANG',
      'TMPDIR',
      'PYTHONPATH',
      'PYTHONNOUSERSITE',
      'PYTHONDONTWRITEBYTECODE',
      'PWD',
      'SHLVL',
      '_',
    ]);
    for (const name of Object.keys(env)) assert.ok(allowed.has(name) || /^_?(PYENV_|LC_)/.test(name), `Python saw ${name}`);
    assert.ok(!JSON.stringify(env).includes('hunter2') && !JSON.stringify(env).includes('marker'));
  });

  it('bytes that are not media fail permanently', async () => {
    const junk = path.join(dir, 'notes.txt');
    await writeFile(junk, 'not audio');
    const error = await new PocketSphinxTranscriber().transcribe(junk).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof TranscriberError);
    assert.deepEqual([error.code, error.retryable], ['transcription_failed', false]);
  });

  it('production installs nothing: an engine missing from TOOLS_DIR is refused at the worker’s start and fails without an install', async () => {
    const empty = path.join(dir, 'tools');
    await mkdir(empty);
    const production = { kind: 'pocketsphinx', toolsDir: empty, installAtRuntime: false } as const;
    const refusal = await transcriberUnusable(production);
    assert.match(
      refusal ?? '',
      /^TRANSCRIBER=pocketsphinx cannot run: it is not installed in .*pocketsphinx-5\.1\.1 .*With NODE_ENV=production nothing is installed at run time/,
    );
    // The worker refuses to start with it, before it connects to anything.
    const config = { ...testConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }), transcriber: production };
    await assert.rejects(
      startWorker(config, createLogger('silent', 'test')),
      (e: Error) => e instanceof ConfigError && e.message === refusal,
    );
    // A transcriber built that way fails as unavailable (retried) and leaves the directory empty.
    const error = await createTranscriber(production, new FfmpegTools())!
      .transcribe(SPEECH)
      .then(
        () => null,
        (e: unknown) => e,
      );
    assert.ok(error instanceof TranscriberError);
    assert.deepEqual([error.code, error.retryable], ['engine_unavailable', true]);
    assert.deepEqual(await readdir(empty), []);
    // Installed (in the image, or here by the test's before), it is accepted; outside production nothing is checked.
    assert.equal(await transcriberUnusable({ ...production, toolsDir: '.tools' }), null);
    assert.equal(await transcriberUnusable({ ...production, installAtRuntime: true }), null);
  });
});
