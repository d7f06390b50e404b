import type { Config } from '../config.js';

/**
 * Task queue names, in one place. `main` serves every workflow and the light activities; `media`
 * the heavy media activities (URL transfers, encodes, transcription) on worker slots of their own
 * (MEDIA_WORKER_ACTIVITY_SLOTS), so that they cannot delay agent processing; `webhooks` the webhook
 * senders' workflows and activities, so that their tasks never queue behind the agent sessions'
 * (decision 0188).
 */
export function taskQueues(config: Pick<Config, 'temporal'>) {
  return { main: config.temporal.taskQueue, media: config.temporal.mediaTaskQueue, webhooks: config.temporal.webhookTaskQueue } as const;
}
