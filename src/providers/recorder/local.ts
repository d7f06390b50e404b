import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FfmpegTools } from '../../media/ffmpeg-tools.js';
import { RecorderError, type BotStatus, type MeetingToJoin, type Recorder } from './types.js';

const exec = promisify(execFile);

export interface LocalRecorderOptions {
  /** Where the recordings it produces are written (STORAGE_DIR/recorder). */
  dir: string;
  /** How long the "meeting" lasts once the bot is in the call. */
  meetingSeconds: number;
  now?: () => number;
  /** Makes the tones when espeak-ng is missing (default: the pinned build under `.tools`). */
  ffmpeg?: FfmpegTools;
}

const JOIN_MS = 1000;
const ADMIT_MS = 1000;
let espeak: boolean | undefined;

/** espeak-ng, when installed, speaks the recording; otherwise it is tones. */
function hasEspeak(): boolean {
  espeak ??= spawnSync('espeak-ng', ['--version'], { stdio: 'ignore' }).status === 0;
  return espeak;
}

/**
 * A recorder for development and tests, with no outside service: its bot joins at once, is in the
 * call, records for `meetingSeconds`, and is done with real media (speech from espeak-ng when it is
 * installed, else ffmpeg-generated tones) that media ingestion processes like any recording. It is
 * stateless: the bot id carries its start, so any worker (or a restarted one) answers the same.
 */
export class LocalRecorder implements Recorder {
  readonly name = 'local';
  private readonly now: () => number;

  constructor(private readonly options: LocalRecorderOptions) {
    this.now = options.now ?? Date.now;
  }

  /** With a key, the bot is remembered in `<dir>/bots/<key>`: every worker of this machine finds it. */
  async createBot(_meeting: MeetingToJoin, o: { idempotencyKey?: string } = {}): Promise<{ botId: string }> {
    const botId = `local-${this.now()}-${randomUUID()}`;
    if (!o.idempotencyKey) return { botId };
    if (!/^[\w-]{1,100}$/.test(o.idempotencyKey)) throw new RecorderError('invalid idempotency key', 'invalid_request', false);
    const file = path.join(this.options.dir, 'bots', o.idempotencyKey);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await writeFile(file, botId, { flag: 'wx' });
      return { botId };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return { botId: (await readFile(file, 'utf8')).trim() };
    }
  }

  async botStatus(botId: string): Promise<BotStatus> {
    const started = Number(/^local-(\d+)-[0-9a-f-]{36}$/.exec(botId)?.[1]);
    if (!Number.isFinite(started)) throw new RecorderError(`unknown bot ${botId}`, 'bot_not_found', false);
    const elapsed = this.now() - started;
    if (elapsed < JOIN_MS) return { state: 'joining' };
    if (elapsed < JOIN_MS + ADMIT_MS) return { state: 'in_call' };
    if (elapsed < JOIN_MS + ADMIT_MS + this.options.meetingSeconds * 1000) return { state: 'recording' };
    return { state: 'done', media: { kind: 'file', path: await this.recording(botId), contentType: 'audio/wav' } };
  }

  async leave(botId: string): Promise<void> {
    await rm(path.join(this.options.dir, `${botId}.wav`), { force: true });
  }

  /** The bot's recording, made once (a retried status call finds it). */
  private async recording(botId: string): Promise<string> {
    const file = path.join(this.options.dir, `${botId}.wav`);
    if (existsSync(file)) return file;
    await mkdir(this.options.dir, { recursive: true });
    const partial = `${file}.partial.wav`;
    const seconds = this.options.meetingSeconds;
    if (hasEspeak()) {
      const text =
        'Hello everyone, thanks for joining. This meeting was recorded by the local recorder. Let us review the plan for this week.';
      await exec('espeak-ng', ['-s', '150', '-w', partial, text]);
    } else {
      const tone = [
        '-nostdin',
        '-hide_banner',
        '-loglevel',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        `sine=frequency=330:duration=${seconds}`,
        partial,
      ];
      const made = await (this.options.ffmpeg ?? new FfmpegTools()).run('ffmpeg', tone, {
        outputFile: partial,
        limits: { wallSeconds: 60, cpuSeconds: 60 },
      });
      if (made.code !== 0)
        throw new RecorderError(
          `the recording could not be made: ${made.stderr.trim().split('\n').at(-1) ?? ''}`,
          'provider_unavailable',
          true,
        );
    }
    await rename(partial, file);
    return file;
  }
}
