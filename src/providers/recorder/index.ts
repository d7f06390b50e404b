import type { RecorderConfig } from '../../config.js';
import path from 'node:path';
import type { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { LocalRecorder } from './local.js';
import { RecallRecorder } from './recall.js';
import type { Recorder } from './types.js';

export { LocalRecorder, type LocalRecorderOptions } from './local.js';
export { RecallRecorder, type RecallRecorderOptions } from './recall.js';
export * from './types.js';

/** The configured recorder; the local one writes its recordings under `<mediaDir>/recorder`. */
export function createRecorder(config: RecorderConfig, mediaDir: string, ffmpeg: FfmpegTools): Recorder {
  switch (config.kind) {
    case 'local':
      return new LocalRecorder({ dir: path.join(mediaDir, 'recorder'), meetingSeconds: config.meetingSeconds, ffmpeg });
    case 'recall':
      return new RecallRecorder({ baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
  }
}
