import type { CliContext } from '../context.js';

/**
 * The meeting recorder and transcription engine this configuration uses, as the worker would build
 * them (no secrets: API keys are reported as set or not).
 */
export function meetingProviders(ctx: CliContext) {
  const { meetings, transcriber } = ctx.config;
  const recorder = meetings.recorder.kind === 'recall'
    ? { kind: 'recall', baseUrl: meetings.recorder.baseUrl, apiKey: 'set', timeoutMs: meetings.recorder.timeoutMs }
    : { kind: 'local', meetingSeconds: meetings.recorder.meetingSeconds };
  return {
    recorder: { ...recorder, botName: meetings.botName, statusPollSeconds: meetings.pollSeconds, maxHours: meetings.maxHours },
    platforms: ['zoom', 'google_meet', 'microsoft_teams', 'webex'],
    transcriber: transcriber.kind === 'openai'
      ? { kind: 'openai', baseUrl: transcriber.baseUrl, model: transcriber.model, apiKey: transcriber.apiKey ? 'set' : 'not set' }
      : { kind: transcriber.kind },
  };
}
