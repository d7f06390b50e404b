import type { TranscriberConfig } from '../../config.js';
import type { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { OpenAiTranscriber } from './openai.js';
import { pocketSphinxDir, pocketSphinxMissing, PocketSphinxTranscriber } from './pocketsphinx.js';
import type { Transcriber } from './types.js';

export { OpenAiTranscriber, type OpenAiTranscriberOptions } from './openai.js';
export { ensurePocketSphinx, pocketSphinxDir, PocketSphinxTranscriber, POCKETSPHINX_DIR } from './pocketsphinx.js';
export * from './types.js';

/** The configured engine; none: recordings without a supplied transcript say `unavailable`. */
export function createTranscriber(config: TranscriberConfig, ffmpeg: FfmpegTools): Transcriber | undefined {
  switch (config.kind) {
    case 'none':
      return undefined;
    case 'pocketsphinx':
      return new PocketSphinxTranscriber({ ffmpeg, dir: pocketSphinxDir(config.toolsDir), installAtRuntime: config.installAtRuntime });
    case 'openai':
      return new OpenAiTranscriber({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model,
        timeoutMs: config.timeoutMs,
        ffmpeg,
      });
  }
}

/**
 * The worker's start-up check (issue 33): an engine that production would have to install at run
 * time is refused before the worker polls, with what to do instead. Null: the engine can run.
 */
export async function transcriberUnusable(config: TranscriberConfig): Promise<string | null> {
  if (config.kind !== 'pocketsphinx' || config.installAtRuntime) return null;
  const missing = await pocketSphinxMissing(pocketSphinxDir(config.toolsDir));
  return missing
    ? `TRANSCRIBER=pocketsphinx cannot run: ${missing}. With NODE_ENV=production nothing is installed at run time: ` +
        'install it where the worker runs (an image built with it), or choose TRANSCRIBER=openai or none'
    : null;
}
