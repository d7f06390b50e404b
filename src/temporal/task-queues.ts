import type { Config } from '../config.js';
import { sessionDrainerTaskQueue } from '../../workflows/session-drainer/contract.js';

/**
 * Task queue names, in one place. `main` serves every workflow and the light activities; `media`
 * the heavy media activities (URL transfers, encodes, transcription) on worker slots of their own
 * (MEDIA_WORKER_ACTIVITY_SLOTS), so that they cannot delay agent processing; `webhooks` the webhook
 * senders' workflows and activities, so that their tasks never queue behind the agent sessions'
 * (decision 0188); `drainers` the session drainer shards' workflows and activity, so that a shard's
 * hand-over between two calls never waits behind the sessions' workflow tasks (decision 0211; its
 * name follows `main`'s, the same on every worker).
 */
export function taskQueues(config: Pick<Config, 'temporal'>) {
  return {
    main: config.temporal.taskQueue,
    media: config.temporal.mediaTaskQueue,
    webhooks: config.temporal.webhookTaskQueue,
    drainers: sessionDrainerTaskQueue(config.temporal.taskQueue),
  } as const;
}
