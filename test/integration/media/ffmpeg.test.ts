import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { encodeRendition, FFMPEG_PATH, FFPROBE_PATH, MediaProcessingError, probeMedia } from '../../../src/media/ffmpeg.js';
import { writeTone } from '../../helpers/media.js';

const exec = promisify(execFile);

/** The bundled ffmpeg and ffprobe on real files (generated here with ffmpeg's own test sources). */
describe('media probing and encoding (bundled ffmpeg)', function () {
  this.timeout(120_000);
  let dir: string;
  let tone: string;
  let clip: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-ffmpeg-'));
    tone = path.join(dir, 'tone.wav');
    clip = path.join(dir, 'clip.mkv');
    await writeTone(tone, { seconds: 20 });
    await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=3:size=640x360:rate=25',
      '-f', 'lavfi', '-i', 'sine=duration=3', '-shortest', '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', clip]);
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('probes audio and video', async () => {
    const audio = await probeMedia(tone);
    assert.deepEqual([audio.hasAudio, audio.hasVideo], [true, false]);
    assert.ok(Math.abs((audio.durationSec ?? 0) - 20) < 0.1);
    const video = await probeMedia(clip);
    assert.deepEqual([video.hasAudio, video.hasVideo], [true, true]);
  });

  it('encodes audio to AAC in M4A with progress rising to 100', async () => {
    const progress: number[] = [];
    const out = path.join(dir, 'tone.m4a');
    const rendition = await encodeRendition(tone, out, await probeMedia(tone), { onProgress: (p) => progress.push(p) });
    assert.deepEqual(rendition, { contentType: 'audio/mp4', extension: 'm4a', copy: false });
    assert.equal(progress[0], 0);
    assert.equal(progress.at(-1), 100);
    assert.ok(progress.every((p, i) => i === 0 || p > progress[i - 1]!), `monotonic: ${progress.join(',')}`);
    const encoded = await probeMedia(out);
    assert.deepEqual([encoded.hasAudio, encoded.hasVideo], [true, false]);
    assert.ok(Math.abs((encoded.durationSec ?? 0) - 20) < 0.2);
  });

  it('copies MP3 and AAC audio as it is (no second encode), without cover art', async () => {
    const mp3 = path.join(dir, 'call.mp3');
    const cover = path.join(dir, 'cover.png');
    await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', cover]);
    await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-i', tone, '-i', cover, '-map', '0:a', '-map', '1:v', '-c:a', 'libmp3lame', '-b:a', '96k',
      '-c:v', 'png', '-disposition:v', 'attached_pic', '-id3v2_version', '3', mp3]);
    const m4a = path.join(dir, 'call.m4a');
    await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-i', tone, '-c:a', 'aac', '-b:a', '96k', m4a]);
    const codecs = async (file: string) => (await exec(FFPROBE_PATH, ['-v', 'error', '-show_entries', 'stream=codec_name,codec_type', '-of', 'csv=p=0', file])).stdout.trim().split('\n');
    for (const [source, expected, codec] of [[mp3, { contentType: 'audio/mpeg', extension: 'mp3', copy: true }, 'mp3'], [m4a, { contentType: 'audio/mp4', extension: 'm4a', copy: true }, 'aac']] as const) {
      const probe = await probeMedia(source);
      assert.deepEqual([probe.hasAudio, probe.hasVideo, probe.audioCodec], [true, false, codec], 'cover art is not video');
      const progress: number[] = [];
      const out = path.join(dir, `copied.${expected.extension}`);
      assert.deepEqual(await encodeRendition(source, out, probe, { onProgress: (p) => progress.push(p) }), expected);
      assert.deepEqual([progress[0], progress.at(-1)], [0, 100]);
      assert.deepEqual(await codecs(out), [`${codec},audio`], 'one audio stream, copied, no picture');
      const copied = await probeMedia(out);
      assert.ok(Math.abs((copied.durationSec ?? 0) - 20) < 0.2, String(copied.durationSec));
      // The same bytes of audio: the bit rate is the source's, not 128 kb/s.
      const { stdout } = await exec(FFPROBE_PATH, ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=bit_rate', '-of', 'csv=p=0', out]);
      assert.ok(Math.abs(Number(stdout.trim()) - 96_000) < 8_000, stdout);
    }
  });

  it('encodes video to H.264 in MP4', async () => {
    const out = path.join(dir, 'clip.mp4');
    const rendition = await encodeRendition(clip, out, await probeMedia(clip));
    assert.equal(rendition.contentType, 'video/mp4');
    const { stdout } = await exec(FFPROBE_PATH, ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', out]);
    assert.deepEqual(stdout.trim().split('\n').sort(), ['aac', 'h264']);
  });

  it('bytes that are not media are processing_failed', async () => {
    const still = path.join(dir, 'still.png');
    await exec(FFMPEG_PATH, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x64', '-frames:v', '1', still]);
    const { readFile } = await import('node:fs/promises');
    const cases = [['random.bin', randomBytes(64 * 1024)], ['notes.txt', Buffer.from('meeting notes, not audio\n'.repeat(100))], ['image.png', await readFile(still)]] as const;
    for (const [name, bytes] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      await assert.rejects(probeMedia(file), (e: unknown) => e instanceof MediaProcessingError && e.code === 'processing_failed', name);
    }
  });

  it('a truncated file fails to encode with processing_failed', async () => {
    const { readFile } = await import('node:fs/promises');
    const whole = await readFile(clip);
    const cut = path.join(dir, 'cut.mkv');
    await writeFile(cut, whole.subarray(0, 2000));
    await assert.rejects(async () => encodeRendition(cut, path.join(dir, 'cut.mp4'), await probeMedia(cut)), MediaProcessingError);
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const pending = encodeRendition(clip, path.join(dir, 'cancelled.mp4'), await probeMedia(clip), { signal: controller.signal });
    controller.abort();
    await assert.rejects(pending, (e: unknown) => (e as Error).name === 'AbortError');
  });
});
