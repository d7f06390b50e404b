import type { Config } from '../config.js';
import { pocketSphinxDir } from './transcriber/pocketsphinx.js';

/** What a worker's meeting recorder and transcriber are (no secrets: keys are reported as set or not). */
export interface MeetingProvidersDescription {
  recorder: Record<string, unknown> & { kind: string };
  platforms: string[];
  transcriber: Record<string, unknown> & { kind: string };
}

/** The meeting recorder and transcription engine a configuration builds, as the worker builds them. */
export function describeMeetingProviders(config: Pick<Config, 'meetings' | 'transcriber'>): MeetingProvidersDescription {
  const { meetings, transcriber } = config;
  const recorder =
    meetings.recorder.kind === 'recall'
      ? { kind: 'recall', baseUrl: meetings.recorder.baseUrl, apiKey: 'set', timeoutMs: meetings.recorder.timeoutMs }
      : { kind: 'local', meetingSeconds: meetings.recorder.meetingSeconds };
  return {
    recorder: { ...recorder, botName: meetings.botName, statusPollSeconds: meetings.pollSeconds, maxHours: meetings.maxHours },
    platforms: ['zoom', 'google_meet', 'microsoft_teams', 'webex'],
    transcriber:
      transcriber.kind === 'openai'
        ? { kind: 'openai', baseUrl: transcriber.baseUrl, model: transcriber.model, apiKey: transcriber.apiKey ? 'set' : 'not set' }
        : transcriber.kind === 'pocketsphinx'
          ? { kind: 'pocketsphinx', dir: pocketSphinxDir(transcriber.toolsDir), installsAtRuntime: transcriber.installAtRuntime }
          : { kind: transcriber.kind },
  };
}
