import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FFMPEG_PATH } from '../../src/media/ffmpeg.js';

const exec = promisify(execFile);

/**
 * Writes `seconds` of a sine tone to `file` with the project's FFmpeg (the format follows the
 * extension): the media of the tests and benchmarks. `sampleRate` is the tone's own;
 * `outputArgs` go before the file (a bitrate, a resampling).
 */
export async function writeTone(file: string, o: { seconds: number; frequency?: number; sampleRate?: number; outputArgs?: readonly string[] }): Promise<void> {
  const tone = `sine=frequency=${o.frequency ?? 440}:duration=${o.seconds}${o.sampleRate ? `:sample_rate=${o.sampleRate}` : ''}`;
  await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', tone, ...(o.outputArgs ?? []), '-y', file]);
}
