import type { TranscriberConfig } from '../../config.js';
import type { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { OpenAiTranscriber } from './openai.js';
import { PocketSphinxTranscriber } from './pocketsphinx.js';
import type { Transcriber } from './types.js';

export { OpenAiTranscriber, type OpenAiTranscriberOptions } from './openai.js';
export { ensurePocketSphinx, PocketSphinxTranscriber, POCKETSPHINX_DIR } from './pocketsphinx.js';
export * from './types.js';

/** The configured engine; none: recordings without a supplied transcript say `unavailable`. */
export function createTranscriber(config: TranscriberConfig, ffmpeg: FfmpegTools): Transcriber | undefined {
  switch (config.kind) {
    case 'none':
      return undefined;
    case 'pocketsphinx':
      return new PocketSphinxTranscriber({ ffmpeg });
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
