import { z } from 'zod';
import { cpuSecondsFor, type FfmpegTools, type RunResult } from './ffmpeg-tools.js';

/**
 * Probing and encoding untrusted media. Bytes that are not media, that ffmpeg cannot decode, or
 * whose decoding breaks a limit are a `MediaProcessingError` (the upload's `processing_failed`).
 *
 * The input is the tool's standard input (`fd:`), the only protocol allowed: no path reaches FFmpeg,
 * so a playlist's references (relative or absolute) resolve to nothing. Only the containers and
 * decoders below may open, and the encode is told the container the probe found.
 */

export class MediaProcessingError extends Error {
  override name = 'MediaProcessingError';
  readonly code = 'processing_failed';
}

/**
 * The containers a recording comes in (demuxer names): MP4/MOV/M4A, Matroska/WebM, MP3, WAV, Ogg,
 * FLAC, ADTS AAC, MPEG-TS. No playlists (HLS, DASH, concat), no images, no text.
 */
export const ACCEPTED_FORMATS = ['mov', 'matroska', 'mp3', 'wav', 'ogg', 'flac', 'aac', 'mpegts'] as const;

/** The decoders they may need: the usual video and audio codecs of recorders and browsers. */
export const ACCEPTED_DECODERS = [
  'h264',
  'hevc',
  'vp8',
  'vp9',
  'av1',
  'libdav1d',
  'mpeg4',
  'theora',
  'mjpeg',
  'aac',
  'aac_fixed',
  'mp3',
  'mp3float',
  'mp2',
  'mp2float',
  'ac3',
  'ac3_fixed',
  'eac3',
  'opus',
  'libopus',
  'vorbis',
  'libvorbis',
  'flac',
  'alac',
  'amrnb',
  'amrwb',
  'pcm_s16le',
  'pcm_s16be',
  'pcm_s24le',
  'pcm_s32le',
  'pcm_f32le',
  'pcm_f64le',
  'pcm_u8',
  'pcm_mulaw',
  'pcm_alaw',
  // Cover art (attached pictures) and text subtitle tracks: ffprobe opens a decoder for every stream
  // (one it may not open fails the probe), the rendition decodes neither.
  'png',
  'mov_text',
  'subrip',
  'ass',
  'ssa',
  'webvtt',
  'text',
] as const;

/** Input options that confine the demuxer and decoders, reading standard input (`fd:`). */
export function guardedInput(format?: string): string[] {
  return [
    '-protocol_whitelist',
    'fd',
    '-format_whitelist',
    ACCEPTED_FORMATS.join(','),
    '-codec_whitelist',
    ACCEPTED_DECODERS.join(','),
    ...(format ? ['-f', format] : []),
    '-i',
    'fd:',
  ];
}

const PROBE_SECONDS = 30;

/** Wall-clock bound of one encode: generous for the probed duration, never past the settings' ceiling. */
export function encodeSecondsFor(durationSec: number | null, ceilingSeconds: number): number {
  return durationSec ? Math.min(ceilingSeconds, Math.ceil(120 + 5 * durationSec)) : ceilingSeconds;
}

function limitMessage(result: RunResult, tools: FfmpegTools, wallSeconds: number, cpuSeconds: number): string | null {
  switch (result.limit) {
    case 'time':
      return `stopped after ${wallSeconds} s (its time limit)`;
    case 'cpu':
      return `stopped: its CPU time limit (${cpuSeconds} s) was reached or it was killed`;
    case 'memory':
      return `stopped: out of memory (limit ${tools.settings.memoryLimitMb} MB)`;
    default:
      return null;
  }
}

export interface MediaProbe {
  /** ffprobe's demuxer name, e.g. `mov,mp4,m4a,3gp,3g2,mj2` (the encode forces its first name). */
  formatName: string;
  durationSec: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
  /** The codec of the first audio stream (`mp3`, `aac`, `pcm_s16le`, …). */
  audioCodec: string | null;
}

const probeJson = z.object({
  format: z.object({ format_name: z.string(), duration: z.string().optional() }).optional(),
  streams: z
    .array(
      z.object({
        codec_type: z.string().optional(),
        codec_name: z.string().optional(),
        disposition: z.object({ attached_pic: z.number().optional() }).optional(),
      }),
    )
    .default([]),
});

/** What the file holds; a file without an audio or video stream is not media. */
export async function probeMedia(tools: FfmpegTools, file: string, signal?: AbortSignal): Promise<MediaProbe> {
  const limits = { wallSeconds: PROBE_SECONDS, cpuSeconds: PROBE_SECONDS };
  const result = await tools.run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...guardedInput()], {
    stdinFile: file,
    limits,
    signal,
  });
  const stopped = limitMessage(result, tools, limits.wallSeconds, limits.cpuSeconds);
  if (stopped) throw new MediaProcessingError(`probing ${stopped}`);
  if (result.code !== 0) throw new MediaProcessingError(`not readable as media: ${lastLine(result.stderr)}`);
  let json: unknown;
  try {
    json = JSON.parse(result.stdout || '{}');
  } catch {
    throw new MediaProcessingError('not readable as media');
  }
  const parsed = probeJson.safeParse(json);
  if (!parsed.success || !parsed.data.format) throw new MediaProcessingError('not readable as media');
  // Cover art in an audio file is a video stream ffprobe marks as an attached picture.
  const real = parsed.data.streams.filter((s) => !s.disposition?.attached_pic);
  const hasAudio = real.some((s) => s.codec_type === 'audio');
  const hasVideo = real.some((s) => s.codec_type === 'video');
  if (!hasAudio && !hasVideo) throw new MediaProcessingError('no audio or video stream');
  const formatName = parsed.data.format.format_name;
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
  if (rendition.extension === 'm4a')
    return [...audioOnly, ...(rendition.copy ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '128k']), ...faststart];
  // The first real video stream (not cover art) and the first audio stream if there is one; no subtitles or data.
  return [
    '-map',
    '0:V:0',
    '-map',
    '0:a:0?',
    '-sn',
    '-dn',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-pix_fmt',
    'yuv420p',
    '-vf',
    'scale=trunc(min(1280\\,iw)/2)*2:-2',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    ...faststart,
  ];
}

/**
 * Produces the playback rendition (browser-playable, seekable: the index at the front), reporting
 * progress 0 to 100 from ffmpeg's `-progress` output against the probed duration. MP3 and AAC audio
 * is copied as it is (no quality loss, seconds instead of minutes); other media is encoded.
 */
export async function encodeRendition(
  tools: FfmpegTools,
  input: string,
  output: string,
  probe: MediaProbe,
  o: { onProgress?: (percent: number) => void; signal?: AbortSignal } = {},
): Promise<Rendition> {
  const rendition = renditionFor(probe);
  const format = probe.formatName.split(',')[0];
  // -nostdin: standard input is the media, never keystrokes.
  const args = [
    '-nostdin',
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...guardedInput(format),
    ...outputArgs(rendition),
    '-progress',
    'pipe:1',
    '-nostats',
    output,
  ];
  const wallSeconds = encodeSecondsFor(probe.durationSec, tools.settings.timeLimitSeconds);
  const limits = { wallSeconds, cpuSeconds: cpuSecondsFor(wallSeconds) };
  let last = -1;
  const report = (percent: number) => {
    const p = Math.max(0, Math.min(100, Math.floor(percent)));
    if (p > last) {
      last = p;
      o.onProgress?.(p);
    }
  };
  report(0);
  const result = await tools.run('ffmpeg', args, {
    stdinFile: input,
    outputFile: output,
    limits,
    signal: o.signal,
    onLine: (line) => {
      const [key, value] = line.split('=');
      if (key === 'out_time_us' || key === 'out_time_ms') {
        // Both are microseconds (ffmpeg's out_time_ms is misnamed).
        const seconds = Number(value) / 1e6;
        if (probe.durationSec && Number.isFinite(seconds)) report(Math.min(99, (seconds / probe.durationSec) * 100));
      }
    },
  });
  const stopped = limitMessage(result, tools, limits.wallSeconds, limits.cpuSeconds);
  if (stopped) throw new MediaProcessingError(`encoding ${stopped}`);
  if (result.code !== 0) throw new MediaProcessingError(`encoding failed: ${lastLine(result.stderr)}`);
  report(100);
  return rendition;
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.slice(0, 300) ?? 'unknown error';
}
