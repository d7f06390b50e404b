import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeRendition, MediaProcessingError, probeMedia } from '../../../src/media/ffmpeg.js';
import { DEFAULT_FFMPEG_SETTINGS, FfmpegTools, FfmpegUnavailableError } from '../../../src/media/ffmpeg-tools.js';
import { testConfig } from '../../../harness/config.js';
import { CPU_BOUND_ENCODE, runFfmpeg, runFfprobe, testFfmpeg, writeClip, writeTone } from '../../../harness/media.js';

/** ffmpeg and ffprobe of one build on real files (generated here with ffmpeg's own test sources). */
describe('media probing and encoding (the pinned FFmpeg 8 build)', function () {
  this.timeout(120_000);
  let dir: string;
  let tone: string;
  let clip: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'intake-ffmpeg-'));
    tone = path.join(dir, 'tone.wav');
    clip = path.join(dir, 'clip.mkv');
    await writeTone(tone, { seconds: 20 });
    await writeClip(clip, { seconds: 3, size: '640x360', rate: 25, codecArgs: ['-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac'] });
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('probes audio and video', async () => {
    const audio = await probeMedia(testFfmpeg, tone);
    assert.deepEqual([audio.hasAudio, audio.hasVideo], [true, false]);
    assert.ok(Math.abs((audio.durationSec ?? 0) - 20) < 0.1);
    const video = await probeMedia(testFfmpeg, clip);
    assert.deepEqual([video.hasAudio, video.hasVideo], [true, true]);
  });

  it('encodes audio to AAC in M4A with progress rising to 100', async () => {
    const progress: number[] = [];
    const out = path.join(dir, 'tone.m4a');
    const rendition = await encodeRendition(testFfmpeg, tone, out, await probeMedia(testFfmpeg, tone), {
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual(rendition, { contentType: 'audio/mp4', extension: 'm4a', copy: false });
    assert.equal(progress[0], 0);
    assert.equal(progress.at(-1), 100);
    assert.ok(
      progress.every((p, i) => i === 0 || p > progress[i - 1]!),
      `monotonic: ${progress.join(',')}`,
    );
    const encoded = await probeMedia(testFfmpeg, out);
    assert.deepEqual([encoded.hasAudio, encoded.hasVideo], [true, false]);
    assert.ok(Math.abs((encoded.durationSec ?? 0) - 20) < 0.2);
  });

  it('copies MP3 and AAC audio as it is (no second encode), without cover art', async () => {
    const mp3 = path.join(dir, 'call.mp3');
    const cover = path.join(dir, 'cover.png');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', cover]);
    await runFfmpeg([
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      tone,
      '-i',
      cover,
      '-map',
      '0:a',
      '-map',
      '1:v',
      '-c:a',
      'libmp3lame',
      '-b:a',
      '96k',
      '-c:v',
      'png',
      '-disposition:v',
      'attached_pic',
      '-id3v2_version',
      '3',
      mp3,
    ]);
    const m4a = path.join(dir, 'call.m4a');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-i', tone, '-c:a', 'aac', '-b:a', '96k', m4a]);
    const codecs = async (file: string) =>
      (await runFfprobe(['-v', 'error', '-show_entries', 'stream=codec_name,codec_type', '-of', 'csv=p=0', file])).stdout
        .trim()
        .split('\n');
    for (const [source, expected, codec] of [
      [mp3, { contentType: 'audio/mpeg', extension: 'mp3', copy: true }, 'mp3'],
      [m4a, { contentType: 'audio/mp4', extension: 'm4a', copy: true }, 'aac'],
    ] as const) {
      const probe = await probeMedia(testFfmpeg, source);
      assert.deepEqual([probe.hasAudio, probe.hasVideo, probe.audioCodec], [true, false, codec], 'cover art is not video');
      const progress: number[] = [];
      const out = path.join(dir, `copied.${expected.extension}`);
      assert.deepEqual(await encodeRendition(testFfmpeg, source, out, probe, { onProgress: (p) => progress.push(p) }), expected);
      assert.deepEqual([progress[0], progress.at(-1)], [0, 100]);
      assert.deepEqual(await codecs(out), [`${codec},audio`], 'one audio stream, copied, no picture');
      const copied = await probeMedia(testFfmpeg, out);
      assert.ok(Math.abs((copied.durationSec ?? 0) - 20) < 0.2, String(copied.durationSec));
      // The same bytes of audio: the bit rate is the source's, not 128 kb/s.
      const { stdout } = await runFfprobe([
        '-v',
        'error',
        '-select_streams',
        'a:0',
        '-show_entries',
        'stream=bit_rate',
        '-of',
        'csv=p=0',
        out,
      ]);
      assert.ok(Math.abs(Number(stdout.trim()) - 96_000) < 8_000, stdout);
    }
  });

  it('encodes video to H.264 in MP4', async () => {
    const out = path.join(dir, 'clip.mp4');
    const rendition = await encodeRendition(testFfmpeg, clip, out, await probeMedia(testFfmpeg, clip));
    assert.equal(rendition.contentType, 'video/mp4');
    const { stdout } = await runFfprobe(['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', out]);
    assert.deepEqual(stdout.trim().split('\n').sort(), ['aac', 'h264']);
  });

  it('a video with a subtitle track is accepted; the rendition has one video and one audio stream', async () => {
    const subtitles = path.join(dir, 'call.srt');
    await writeFile(subtitles, '1\n00:00:00,000 --> 00:00:01,000\nHello\n');
    const withSubs = path.join(dir, 'with-subs.mp4');
    await runFfmpeg([
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      clip,
      '-i',
      subtitles,
      '-map',
      '0',
      '-map',
      '1',
      '-c:v',
      'copy',
      '-c:a',
      'copy',
      '-c:s',
      'mov_text',
      '-y',
      withSubs,
    ]);
    const probe = await probeMedia(testFfmpeg, withSubs);
    assert.deepEqual([probe.hasAudio, probe.hasVideo], [true, true]);
    const out = path.join(dir, 'with-subs-rendition.mp4');
    await encodeRendition(testFfmpeg, withSubs, out, probe);
    const { stdout } = await runFfprobe(['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', out]);
    assert.deepEqual(stdout.trim().split('\n').sort(), ['audio', 'video']);
  });

  it('bytes that are not media are processing_failed', async () => {
    const still = path.join(dir, 'still.png');
    await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x64', '-frames:v', '1', still]);
    const { readFile } = await import('node:fs/promises');
    const cases = [
      ['random.bin', randomBytes(64 * 1024)],
      ['notes.txt', Buffer.from('meeting notes, not audio\n'.repeat(100))],
      ['image.png', await readFile(still)],
    ] as const;
    for (const [name, bytes] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      await assert.rejects(
        probeMedia(testFfmpeg, file),
        (e: unknown) => e instanceof MediaProcessingError && e.code === 'processing_failed',
        name,
      );
    }
  });

  it('a truncated file fails to encode with processing_failed', async () => {
    const { readFile } = await import('node:fs/promises');
    const whole = await readFile(clip);
    const cut = path.join(dir, 'cut.mkv');
    await writeFile(cut, whole.subarray(0, 2000));
    await assert.rejects(
      async () => encodeRendition(testFfmpeg, cut, path.join(dir, 'cut.mp4'), await probeMedia(testFfmpeg, cut)),
      MediaProcessingError,
    );
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const pending = encodeRendition(testFfmpeg, clip, path.join(dir, 'cancelled.mp4'), await probeMedia(testFfmpeg, clip), {
      signal: controller.signal,
    });
    controller.abort();
    await assert.rejects(pending, (e: unknown) => (e as Error).name === 'AbortError');
  });

  describe('untrusted media', () => {
    /** A media directory as the worker keeps it: another recording's rendition, and this upload. */
    let other: string;
    let uploads: string;
    before(async () => {
      other = path.join(dir, 'media', 'renditions', 'rec_other', 'ing_other.mp4');
      uploads = path.join(dir, 'media', 'uploads');
      await mkdir(path.dirname(other), { recursive: true });
      await mkdir(uploads, { recursive: true });
      await encodeRendition(testFfmpeg, clip, other, await probeMedia(testFfmpeg, clip));
    });

    /** An HLS playlist that plays another recording's file, by a relative and by an absolute path. */
    const playlist = (target: string) =>
      [
        '#EXTM3U',
        '#EXT-X-TARGETDURATION:10',
        '#EXTINF:3,',
        path.relative(uploads, target),
        '#EXTINF:3,',
        target,
        '#EXT-X-ENDLIST',
        '',
      ].join('\n');

    it("a crafted HLS playlist that references another recording's file is refused, probed or encoded", async () => {
      const crafted = path.join(uploads, 'ing_crafted.m3u8');
      await writeFile(crafted, playlist(other));
      // The attack is real: the same build, unguarded and given the path, reads the other file.
      const { stdout } = await runFfprobe(['-v', 'error', '-show_entries', 'format=format_name,duration', '-of', 'csv=p=0', crafted]);
      assert.match(stdout, /^hls,6\./, 'unguarded, the playlist plays the other recording twice');
      await assert.rejects(
        probeMedia(testFfmpeg, crafted),
        (e: unknown) => e instanceof MediaProcessingError && e.code === 'processing_failed',
      );
      // Even told the format (a forged probe), the encode refuses it and writes nothing.
      const out = path.join(dir, 'crafted.m4a');
      const forged = { formatName: 'hls', durationSec: 6, hasAudio: true, hasVideo: false, audioCodec: 'aac' };
      await assert.rejects(encodeRendition(testFfmpeg, crafted, out, forged), MediaProcessingError);
      await assert.rejects(stat(out), { code: 'ENOENT' });
    });

    it('a concat script and a playlist named like an upload (no extension) are refused', async () => {
      const concat = path.join(uploads, 'ing_concat');
      await writeFile(concat, `ffconcat version 1.0\nfile ${other}\n`);
      const bare = path.join(uploads, 'ing_bare');
      await writeFile(bare, playlist(other));
      for (const file of [concat, bare]) {
        await assert.rejects(probeMedia(testFfmpeg, file), MediaProcessingError, file);
      }
    });

    it('the encode reads the container the probe found, not what the bytes claim later', async () => {
      // An MP3 probed as MP3 encodes; told it is Matroska, the same bytes are refused.
      const mp3 = path.join(dir, 'forced.mp3');
      await runFfmpeg(['-hide_banner', '-loglevel', 'error', '-i', tone, '-c:a', 'libmp3lame', '-b:a', '64k', '-y', mp3]);
      const probe = await probeMedia(testFfmpeg, mp3);
      assert.equal(probe.formatName, 'mp3');
      await encodeRendition(testFfmpeg, mp3, path.join(dir, 'forced-ok.mp3'), probe);
      await assert.rejects(
        encodeRendition(testFfmpeg, mp3, path.join(dir, 'forced-bad.mp4'), { ...probe, formatName: 'matroska,webm', hasVideo: true }),
        MediaProcessingError,
      );
    });

    it('an encode past its wall-clock limit is stopped, with processing_failed', async () => {
      const hurried = new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, timeLimitSeconds: 0.05 });
      const started = Date.now();
      await assert.rejects(
        encodeRendition(hurried, clip, path.join(dir, 'hurried.mp4'), await probeMedia(testFfmpeg, clip)),
        (e: unknown) => e instanceof MediaProcessingError && /time limit/.test(e.message),
      );
      assert.ok(Date.now() - started < 10_000);
    });

    it('a run past its CPU time limit is killed', async () => {
      const result = await testFfmpeg.run('ffmpeg', CPU_BOUND_ENCODE, { limits: { wallSeconds: 120, cpuSeconds: 1 } });
      assert.equal(result.limit, 'cpu');
      assert.notEqual(result.code, 0);
    });

    it('an encode that needs more memory than its limit fails with processing_failed; under the default it succeeds', async () => {
      const small = new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, memoryLimitMb: 300 });
      const probe = await probeMedia(testFfmpeg, clip);
      await assert.rejects(encodeRendition(small, clip, path.join(dir, 'small.mp4'), probe), MediaProcessingError);
      await encodeRendition(testFfmpeg, clip, path.join(dir, 'roomy.mp4'), probe);
    });
  });

  describe('which FFmpeg', () => {
    /** A stand-in binary that prints a version line, as `ffmpeg -version` does. */
    const fake = async (name: string, line: string) => {
      const file = path.join(dir, name);
      await writeFile(file, `#!/bin/sh\necho '${line}'\n`, { mode: 0o755 });
      return file;
    };

    it('the default is the pinned FFmpeg 8 build, one build for probing and decoding', async () => {
      const binaries = await testFfmpeg.binaries();
      assert.match(binaries.version, /^ffmpeg version n8\./);
      const build = (line: string) => line.split(' ')[2];
      assert.equal(build((await runFfprobe(['-version'])).stdout), build(binaries.version));
    });

    it('with NODE_ENV=production nothing is installed at run time: no FFmpeg found is an error that says so', async () => {
      const tools = path.join(dir, 'no-tools');
      await mkdir(tools);
      const path0 = process.env.PATH;
      process.env.PATH = tools;
      try {
        await assert.rejects(
          new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, toolsDir: tools, installAtRuntime: false, sandbox: 'none' }).binaries(),
          (e: unknown) =>
            e instanceof FfmpegUnavailableError &&
            /^FFmpeg is not installed \(with NODE_ENV=production nothing is installed at run time\)/.test(e.message),
        );
      } finally {
        process.env.PATH = path0;
      }
      assert.deepEqual(await readdir(tools), [], 'no pip install');
      assert.equal(
        testConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://intake.example.com' }).media.ffmpeg.installAtRuntime,
        false,
      );
      assert.equal(testConfig().media.ffmpeg.installAtRuntime, true);
    });

    it('runs FFmpeg at the configured niceness, below the services (FFMPEG_NICENESS, 10 by default)', async () => {
      // A stand-in build that answers -version as FFmpeg 7 and otherwise prints the niceness it runs at.
      const tool = async (name: string) => {
        const file = path.join(dir, name);
        await writeFile(
          file,
          `#!/bin/sh\nif [ "$1" = "-hide_banner" ]; then echo '${name} version 7.1.5 Copyright (c) the FFmpeg developers'; else nice; fi\n`,
          {
            mode: 0o755,
          },
        );
        return file;
      };
      const settings = {
        ...DEFAULT_FFMPEG_SETTINGS,
        ffmpegPath: await tool('ffmpeg'),
        ffprobePath: await tool('ffprobe'),
        sandbox: 'none' as const,
      };
      const limits = { cpuSeconds: 10, wallSeconds: 10 };
      const niceness = async (o: typeof settings & { niceness?: number }) =>
        (await new FfmpegTools(o).run('ffmpeg', ['-i', 'x'], { limits })).stdout.trim();
      const own = (await promisify(execFile)('nice')).stdout.trim();
      assert.equal(testConfig().media.ffmpeg.niceness, 10);
      assert.equal(await niceness(settings), String(Math.min(19, Number(own) + 10)));
      assert.equal(await niceness({ ...settings, niceness: 0 }), own);
      assert.equal(await niceness({ ...settings, niceness: 19 }), '19');
    });

    it('a configured prober of another build than the encoder is refused, and so is FFmpeg older than 6', async () => {
      const { ffmpeg } = await testFfmpeg.binaries();
      const otherProbe = await fake('ffprobe-5', 'ffprobe version 5.1.6-0+deb12u1 Copyright (c) 2007-2024 the FFmpeg developers');
      await assert.rejects(
        new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, ffmpegPath: ffmpeg, ffprobePath: otherProbe }).binaries(),
        (e: unknown) => e instanceof FfmpegUnavailableError && /different builds/.test(e.message),
      );
      const old = [
        await fake('ffmpeg-4', 'ffmpeg version 4.1 Copyright (c) 2000-2018'),
        await fake('ffprobe-4', 'ffprobe version 4.1 Copyright (c) 2007-2018'),
      ];
      await assert.rejects(
        new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, ffmpegPath: old[0], ffprobePath: old[1] }).binaries(),
        (e: unknown) => e instanceof FfmpegUnavailableError && /older than 6/.test(e.message),
      );
      assert.throws(() => new FfmpegTools({ ...DEFAULT_FFMPEG_SETTINGS, ffmpegPath: ffmpeg }), /FFMPEG_PATH and FFPROBE_PATH go together/);
    });
  });
});
