import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import { spawn } from 'node:child_process';
import { z } from 'zod';

/**
 * Probing and encoding with the ffmpeg and ffprobe binaries the npm packages carry (no system
 * install needed). Bytes that are not media, or that ffmpeg cannot decode, are a
 * `MediaProcessingError` (the upload's `processing_failed`).
 */

export const FFMPEG_PATH = ffmpegInstaller.path;
export const FFPROBE_PATH = ffprobeInstaller.path;

export class MediaProcessingError extends Error {
  override name = 'MediaProcessingError';
  readonly code = 'processing_failed';
}

/** Formats ffprobe accepts that are not recordings: text, still images. */
const NOT_RECORDINGS = ['tty', 'image2', 'gif', 'webp', 'apng', 'bmp'];

export interface MediaProbe {
  formatName: string;
  durationSec: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
  /** The codec of the first audio stream (`mp3`, `aac`, `pcm_s16le`, …). */
  audioCodec: string | null;
}

const probeJson = z.object({
  format: z.object({ format_name: z.string(), duration: z.string().optional() }).optional(),
  streams: z.array(z.object({ codec_type: z.string().optional(), codec_name: z.string().optional(), disposition: z.object({ attached_pic: z.number().optional() }).optional() })).default([]),
});

/** What the file holds; a file without an audio or video stream is not media. */
export async function probeMedia(file: string, signal?: AbortSignal): Promise<MediaProbe> {
  const { code, stdout, stderr } = await run(FFPROBE_PATH, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], signal);
  if (code !== 0) throw new MediaProcessingError(`not readable as media: ${lastLine(stderr)}`);
  const parsed = probeJson.safeParse(JSON.parse(stdout || '{}'));
  if (!parsed.success || !parsed.data.format) throw new MediaProcessingError('not readable as media');
  // Cover art in an audio file is a video stream ffprobe marks as an attached picture.
  const real = parsed.data.streams.filter((s) => !s.disposition?.attached_pic);
  const hasAudio = real.some((s) => s.codec_type === 'audio');
  const hasVideo = real.some((s) => s.codec_type === 'video');
  if (!hasAudio && !hasVideo) throw new MediaProcessingError('no audio or video stream');
  const formatName = parsed.data.format.format_name;
  // ffprobe also "reads" text (tty: an ANSI art video) and still images: not recordings.
  if (NOT_RECORDINGS.some((f) => formatName.split(',').some((n) => n === f || n.endsWith('_pipe')))) {
    throw new MediaProcessingError(`not an audio or video recording (${formatName})`);
  }
  const duration = Number(parsed.data.format.duration);
  const audioCodec = real.find((s) => s.codec_type === 'audio')?.codec_name ?? null;
  return { formatName, durationSec: Number.isFinite(duration) && duration > 0 ? duration : null, hasAudio, hasVideo, audioCodec };
}

export interface Rendition {
  /**
   * `video/mp4` (H.264 and AAC, fast start) for video; for audio `audio/mpeg` (an MP3 source,
   * copied) or `audio/mp4` (AAC in M4A: an AAC source copied, anything else encoded).
   */
  contentType: 'audio/mp4' | 'audio/mpeg' | 'video/mp4';
  extension: 'm4a' | 'mp3' | 'mp4';
  /** The audio is already browser-playable: copied into the rendition, not encoded again. */
  copy: boolean;
}

export function renditionFor(probe: MediaProbe): Rendition {
  if (probe.hasVideo) return { contentType: 'video/mp4', extension: 'mp4', copy: false };
  if (probe.audioCodec === 'mp3') return { contentType: 'audio/mpeg', extension: 'mp3', copy: true };
  return { contentType: 'audio/mp4', extension: 'm4a', copy: probe.audioCodec === 'aac' };
}

/** ffmpeg's output options for a rendition: stream copy or an encode, and the container. */
function outputArgs(rendition: Rendition): string[] {
  // Only the first audio stream: no cover art, no second language track.
  const audioOnly = ['-vn', '-map', '0:a:0'];
  if (rendition.extension === 'mp3') return [...audioOnly, '-c:a', 'copy', '-f', 'mp3'];
  const faststart = ['-movflags', '+faststart', '-f', 'mp4'];
  if (rendition.extension === 'm4a') return [...audioOnly, ...(rendition.copy ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '128k']), ...faststart];
  return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-vf', 'scale=trunc(min(1280\\,iw)/2)*2:-2', '-c:a', 'aac', '-b:a', '128k', ...faststart];
}

/**
 * Produces the playback rendition (browser-playable, seekable: the index at the front), reporting
 * progress 0 to 100 from ffmpeg's `-progress` output against the probed duration. MP3 and AAC audio
 * is copied as it is (no quality loss, seconds instead of minutes); other media is encoded.
 */
export async function encodeRendition(
  input: string,
  output: string,
  probe: MediaProbe,
  o: { onProgress?: (percent: number) => void; signal?: AbortSignal } = {},
): Promise<Rendition> {
  const rendition = renditionFor(probe);
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-i', input, ...outputArgs(rendition), '-progress', 'pipe:1', '-nostats', output];
  let last = -1;
  const report = (percent: number) => {
    const p = Math.max(0, Math.min(100, Math.floor(percent)));
    if (p > last) {
      last = p;
      o.onProgress?.(p);
    }
  };
  report(0);
  const { code, stderr } = await run(FFMPEG_PATH, args, o.signal, (line) => {
    const [key, value] = line.split('=');
    if (key === 'out_time_us' || key === 'out_time_ms') {
      // Both are microseconds (ffmpeg's out_time_ms is misnamed).
      const seconds = Number(value) / 1e6;
      if (probe.durationSec && Number.isFinite(seconds)) report(Math.min(99, (seconds / probe.durationSec) * 100));
    }
  });
  if (code !== 0) throw new MediaProcessingError(`encoding failed: ${lastLine(stderr)}`);
  report(100);
  return rendition;
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], signal?: AbortSignal, onLine?: (line: string) => void): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (!onLine) {
        stdout += chunk;
        return;
      }
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach((l) => onLine(l.trim()));
    });
    // Keep the end of stderr only: it names the failure.
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? 'unknown error';
}
