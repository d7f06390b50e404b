import type { Config } from '../config.js';

/**
 * Task queue names, in one place. One queue serves every workflow and activity today; an area that
 * needs its own worker pool (ffmpeg encoding, say) gets its own name here.
 */
export function taskQueues(config: Pick<Config, 'temporal'>) {
  return { main: config.temporal.taskQueue } as const;
}
