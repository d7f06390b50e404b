import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';
import type { Utterance } from '../../domain/transcript.js';
import { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { resolveFromRoot } from '../../paths.js';
import { extractSpeech, TranscriberError, type Transcriber } from './types.js';
import { pipInstallTarget } from '../../pip-install.js';

const exec = promisify(execFile);
export const POCKETSPHINX_VERSION = '5.1.1';
/** Where the PyPI wheel (engine and its US English model, 38 MB) is installed under a tools directory (TOOLS_DIR). */
export function pocketSphinxDir(toolsDir = '.tools'): string {
  return path.join(resolveFromRoot(toolsDir), `pocketsphinx-${POCKETSPHINX_VERSION}`);
}
export const POCKETSPHINX_DIR = pocketSphinxDir();
const SCRIPT = fileURLToPath(new URL('./sphinx_transcribe.py', import.meta.url));

/**
 * What of the worker's environment Python may see: where to find programs and its own installation
 * (pyenv included), the locale and the temporary directory. Nothing else: the worker holds the
 * database URL, payload keys, S3 and provider secrets, and a flaw in the engine or its model files
 * must find none of them (FFmpeg's environment is fixed the same way, media/ffmpeg-sandbox.ts).
 */
const PYTHON_ENV_NAMES = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'PYENV_ROOT', 'PYENV_VERSION'] as const;

/** The whole environment of a PocketSphinx process: the names above from the worker's, and the engine's directory. */
export function sphinxEnv(dir: string, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PYTHONPATH: dir, PYTHONNOUSERSITE: '1', PYTHONDONTWRITEBYTECODE: '1' };
  for (const name of PYTHON_ENV_NAMES) if (from[name] !== undefined) env[name] = from[name];
  return env;
}

const Output = z.array(z.object({ startSec: z.number(), endSec: z.number(), text: z.string() }));

let installing: Promise<void> | undefined;

/** Installs the pocketsphinx wheel into .tools/ once (PyPI is reachable where npm is). */
export function ensurePocketSphinx(dir = POCKETSPHINX_DIR): Promise<void> {
  if (existsSync(path.join(dir, 'pocketsphinx', '__init__.py'))) return Promise.resolve();
  installing ??= pipInstallTarget({
    python: 'python3',
    target: dir,
    args: ['--no-deps', `pocketsphinx==${POCKETSPHINX_VERSION}`],
    timeoutMs: 600_000,
  }).finally(() => {
    installing = undefined;
  });
  return installing;
}

/**
 * What keeps PocketSphinx from running here without installing anything (production), or null:
 * Python 3, the engine under `dir`, and the script beside this module (`npm run build` copies it).
 */
export async function pocketSphinxMissing(dir: string): Promise<string | null> {
  if (!existsSync(SCRIPT)) return `its script ${SCRIPT} is missing (the build copies it: \`npm run build\`)`;
  if (!existsSync(path.join(dir, 'pocketsphinx', '__init__.py')))
    return `it is not installed in ${dir} (\`python3 -m pip install --no-deps --target ${dir} pocketsphinx==${POCKETSPHINX_VERSION}\`)`;
  try {
    await exec('python3', ['-c', 'import pocketsphinx'], { env: sphinxEnv(dir), timeout: 30_000 });
  } catch (error) {
    return `python3 cannot load it: ${(error as Error).message.split('\n')[0] ?? ''}`;
  }
  return null;
}

/**
 * A built-in offline engine: PocketSphinx with its bundled US English model, run by Python on the
 * worker. Utterances are the stretches of speech its voice activity detector finds, speaker 0 (it
 * does not tell speakers apart). Accuracy is modest (about 30% word errors on clean read speech),
 * speed about half of real time on one core: good for development and for offline installations;
 * `TRANSCRIBER=openai` for quality.
 */
export class PocketSphinxTranscriber implements Transcriber {
  readonly name = 'pocketsphinx';

  constructor(private readonly options: { dir?: string; ffmpeg?: FfmpegTools; installAtRuntime?: boolean } = {}) {}

  async transcribe(mediaFile: string, options: { signal?: AbortSignal } = {}): Promise<Utterance[]> {
    const dir = this.options.dir ?? POCKETSPHINX_DIR;
    try {
      if (this.options.installAtRuntime === false) {
        const missing = await pocketSphinxMissing(dir);
        if (missing) throw new Error(missing);
      } else await ensurePocketSphinx(dir);
    } catch (error) {
      throw new TranscriberError(
        `PocketSphinx could not be installed: ${(error as Error).message.split('\n')[0] ?? ''}`,
        'engine_unavailable',
        true,
      );
    }
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'intake-sphinx-'));
    const signal = options.signal ? { signal: options.signal } : {};
    try {
      const raw = path.join(scratch, 'speech.raw');
      await extractSpeech(this.options.ffmpeg ?? new FfmpegTools(), mediaFile, raw, 's16le', options.signal);
      const { stdout } = await exec('python3', [SCRIPT, raw], {
        ...signal,
        env: sphinxEnv(dir),
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: unknown) => {
        if (options.signal?.aborted) throw options.signal.reason;
        throw new TranscriberError(
          `PocketSphinx failed: ${(error as Error).message.split('\n').at(-2) ?? ''}`,
          'transcription_failed',
          true,
        );
      });
      const parsed = Output.safeParse(JSON.parse(stdout));
      if (!parsed.success) throw new TranscriberError('PocketSphinx gave output that could not be read', 'transcription_failed', true);
      return parsed.data.map((u) => ({ startSec: u.startSec, endSec: Math.max(u.startSec, u.endSec), speaker: 0, text: u.text }));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
}
