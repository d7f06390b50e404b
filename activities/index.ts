import type { DatabasePool } from 'slonik';
import { createSignalExtractor } from '../src/providers/signal-extractor/index.js';
import type { SignalExtractor } from '../src/providers/signal-extractor/types.js';
import type { ActivityMetrics } from '../src/metrics/activity-metrics.js';
import type { Config } from '../src/config.js';
import { createAgentSessionActivities } from './agent-sessions.js';
import { createDiagnosticsActivities } from './diagnostics.js';
import { createMediaActivities, type MediaActivityDeps } from './media.js';
import { createMediaStore } from '../src/media/media-store.js';
import { FfmpegTools } from '../src/media/ffmpeg-tools.js';
import { PUBLIC_ADDRESSES } from '../src/media/safe-fetch.js';
import { resolveFromRoot } from '../src/paths.js';
import { createUploadStore, FileUploadStore, uploadsDirectory } from '../src/media/upload-store.js';
import { createRecorder, type Recorder } from '../src/providers/recorder/index.js';
import { createMeetingActivities } from './meeting-joins.js';
import { createTranscriber } from '../src/providers/transcriber/index.js';
import { createRetentionActivities } from './retention.js';
import { createSessionWakeActivities } from './session-wakes.js';
import { createMediaReconcilerActivities } from './media-reconciler.js';
import { createSessionDrainerActivities } from './session-drainer.js';
import { drainerSettings, type DrainerSettings } from '../src/agents/drainer.js';
import type { DrainerShardHost } from '../src/agents/drainer-shards.js';
import { describeMeetingProviders, type MeetingProvidersDescription } from '../src/providers/describe.js';
import { createWebhookActivities } from './webhooks.js';
import { createRecordingDeletionActivities } from './recording-deletion.js';
import { createPersonErasureActivities } from './person-erasure.js';
import type { WebhookDeliverySettings } from '../src/webhooks/delivery.js';
import { webhookAddressPolicy } from '../src/webhooks/address-policy.js';
import type { WebhookWakes } from '../src/webhooks/wakes.js';

export interface ActivityDeps extends MediaActivityDeps {
  pool: DatabasePool;
  /** The meeting recorder the meeting-join workflow drives. */
  recorder: Recorder;
  extractor: SignalExtractor;
  analysisCreditCost: number;
  /** The session drainer's settings (its task queue is the worker's). */
  drainer: DrainerSettings;
  /** This process's side of the drainer shards (its share, its lanes); without it a run drains its shard until it ends. */
  drainerShards?: DrainerShardHost;
  /**
   * Aborted when the worker starts to shut down: the drainer's long-running call returns at once
   * (the SDK would cancel it only after the shutdown grace time).
   */
  workerStopping?: AbortSignal;
  /** The worker's activity metrics (analyses, media phases); none in tests that do not read them. */
  metrics?: ActivityMetrics;
  /** What `intake meeting-providers` reports of this worker (from its configuration). */
  meetingProviders?: MeetingProvidersDescription;
  /** DOMAIN_EVENT_RETENTION_DAYS (the retention sweep's events); the default when absent. */
  eventRetentionDays?: number;
  /** The webhook sender's settings; without them the worker sends no webhooks (its activity fails). */
  webhooks?: WebhookDeliverySettings;
  /** The process's sender-call wakes, shared with its webhook waker (decision 0188). */
  webhookWakes?: WebhookWakes;
}

/** The production dependencies of the activities, from configuration. */
export function activityDeps(
  pool: DatabasePool,
  config: Pick<Config, 'agents' | 'temporal' | 'signalExtractor' | 'media' | 'transcriber' | 'meetings' | 'domainEvents' | 'webhooks'>,
  log: (message: string) => void = () => undefined,
): ActivityDeps {
  const ffmpeg = new FfmpegTools(config.media.ffmpeg, log);
  return {
    recorder: createRecorder(config.meetings.recorder, resolveFromRoot(config.media.dir), ffmpeg),
    pool,
    extractor: createSignalExtractor(config.signalExtractor),
    analysisCreditCost: config.agents.analysisCreditCost,
    eventRetentionDays: config.domainEvents.retentionDays,
    drainer: drainerSettings(config),
    mediaDir: resolveFromRoot(config.media.dir),
    uploadStore: createUploadStore(config.media),
    mediaStore: createMediaStore(config.media),
    transcriber: createTranscriber(config.transcriber, ffmpeg),
    ffmpeg,
    // Production dials public addresses only...
    addressPolicy: PUBLIC_ADDRESSES,
    // ... except the host names an operator names (MEDIA_FETCH_ALLOWED_HOSTS), for media on its own network.
    fetchAllowedHosts: config.media.fetchAllowedHosts,
    meetingProviders: describeMeetingProviders(config),
    ...(config.temporal.payloadKeys
      ? {
          webhooks: {
            payloadKeys: config.temporal.payloadKeys,
            policy: webhookAddressPolicy({
              allowedNetworks: config.webhooks.allowedPrivateNetworks,
              allowLoopback: config.webhooks.allowLoopback,
            }),
          },
        }
      : {}),
  };
}

/** Every activity the worker registers, built from injected dependencies (tests pass their own). */
export function createActivities(deps: ActivityDeps) {
  const uploadStore = deps.uploadStore ?? new FileUploadStore(uploadsDirectory(deps.mediaDir));
  return {
    ...createDiagnosticsActivities({ ...deps, ffmpeg: deps.ffmpeg ?? new FfmpegTools() }),
    ...createAgentSessionActivities(deps),
    ...createRetentionActivities(deps),
    ...createSessionWakeActivities(deps),
    ...createMediaReconcilerActivities(deps),
    ...createSessionDrainerActivities(deps),
    ...createMediaActivities({ ...deps, uploadStore }),
    ...createMeetingActivities({ pool: deps.pool, recorder: deps.recorder, uploadStore }),
    ...createWebhookActivities(deps),
    ...createRecordingDeletionActivities({ ...deps, uploadStore }),
    ...createPersonErasureActivities(deps),
  };
}
