import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FfmpegTools } from '../src/media/ffmpeg-tools.js';

const exec = promisify(execFile);

/** The FFmpeg the worker uses by default (the pinned build under `.tools`, installed on first use). */
export const testFfmpeg = new FfmpegTools();

/** Ten minutes of 1080p encoded slowly: far more CPU than a limit of a second or two allows. */
export const CPU_BOUND_ENCODE: readonly string[] = [
  '-nostdin',
  '-v',
  'error',
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=1920x1080:rate=30:duration=600',
  '-c:v',
  'libx264',
  '-preset',
  'slow',
  '-f',
  'null',
  '-',
];

/** Runs the project's ffmpeg with `args` (fixtures: tones, clips, crafted files). */
export async function runFfmpeg(args: readonly string[]): Promise<{ stdout: string }> {
  return exec((await testFfmpeg.binaries()).ffmpeg, args, { maxBuffer: 1 << 24 });
}

/** Runs the project's ffprobe with `args` (to check what a rendition holds). */
export async function runFfprobe(args: readonly string[]): Promise<{ stdout: string }> {
  return exec((await testFfmpeg.binaries()).ffprobe, args, { maxBuffer: 1 << 24 });
}

/**
 * Writes `seconds` of a sine tone to `file` with the project's FFmpeg (the format follows the
 * extension): the media of the tests and benchmarks. `sampleRate` is the tone's own;
 * `outputArgs` go before the file (a bitrate, a resampling).
 */
export async function writeTone(
  file: string,
  o: { seconds: number; frequency?: number; sampleRate?: number; outputArgs?: readonly string[] },
): Promise<void> {
  const tone = `sine=frequency=${o.frequency ?? 440}:duration=${o.seconds}${o.sampleRate ? `:sample_rate=${o.sampleRate}` : ''}`;
  await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', tone, ...(o.outputArgs ?? []), '-y', file]);
}

/**
 * Writes `seconds` of a test pattern with a tone to `file` with the project's FFmpeg: `size` (`WxH`)
 * at `rate` frames a second, in the codecs `codecArgs` name (the container follows the extension).
 */
export async function writeClip(
  file: string,
  o: { seconds: number; size: string; rate: number; codecArgs: readonly string[] },
): Promise<void> {
  const pattern = `testsrc=duration=${o.seconds}:size=${o.size}:rate=${o.rate}`;
  const tone = `sine=duration=${o.seconds}`;
  await runFfmpeg([
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    pattern,
    '-f',
    'lavfi',
    '-i',
    tone,
    '-shortest',
    ...o.codecArgs,
    '-y',
    file,
  ]);
}

/** Whether `bytes` begin an ISO base media file (MP4, M4A): its first box is `ftyp`. */
export function isMp4(bytes: Uint8Array): boolean {
  return Buffer.from(bytes).subarray(4, 8).toString('latin1') === 'ftyp';
}
