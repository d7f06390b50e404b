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
}

const probeJson = z.object({
  format: z.object({ format_name: z.string(), duration: z.string().optional() }).optional(),
  streams: z.array(z.object({ codec_type: z.string().optional(), disposition: z.object({ attached_pic: z.number().optional() }).optional() })).default([]),
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
  return { formatName, durationSec: Number.isFinite(duration) && duration > 0 ? duration : null, hasAudio, hasVideo };
}

export interface Rendition {
  /** `audio/mp4` (AAC in M4A) for audio, `video/mp4` (H.264 and AAC, fast start) for video. */
  contentType: 'audio/mp4' | 'video/mp4';
  extension: 'm4a' | 'mp4';
}

export function renditionFor(probe: MediaProbe): Rendition {
  return probe.hasVideo ? { contentType: 'video/mp4', extension: 'mp4' } : { contentType: 'audio/mp4', extension: 'm4a' };
}

/**
 * Encodes the playback rendition (browser-playable, seekable: the index at the front), reporting
 * progress 0 to 100 from ffmpeg's `-progress` output against the probed duration.
 */
export async function encodeRendition(
  input: string,
  output: string,
  probe: MediaProbe,
  o: { onProgress?: (percent: number) => void; signal?: AbortSignal } = {},
): Promise<Rendition> {
  const rendition = renditionFor(probe);
  const codecs = probe.hasVideo
    ? ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-vf', 'scale=trunc(min(1280\\,iw)/2)*2:-2', '-c:a', 'aac', '-b:a', '128k']
    : ['-vn', '-c:a', 'aac', '-b:a', '128k'];
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-i', input, ...codecs, '-movflags', '+faststart', '-progress', 'pipe:1', '-nostats', '-f', 'mp4', output];
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
