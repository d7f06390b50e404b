import type { ExtractorConfig } from '../../config.js';
import { LocalSignalExtractor } from './local.js';
import { OpenAiSignalExtractor } from './openai.js';
import type { SignalExtractor } from './types.js';

export { LocalSignalExtractor } from './local.js';
export { OpenAiSignalExtractor, type OpenAiSignalExtractorOptions } from './openai.js';
export * from './types.js';

export function createSignalExtractor(config: ExtractorConfig): SignalExtractor {
  switch (config.kind) {
    case 'local':
      return new LocalSignalExtractor();
    case 'openai':
      return new OpenAiSignalExtractor({
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        model: config.model,
        timeoutMs: config.timeoutMs,
      });
  }
}
