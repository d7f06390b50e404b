/**
 * The event seam (issue 30, point 6): the state changes Intake announces. Each is recorded with
 * `recordEvent` (src/db/repositories/domain-events.ts) in the same transaction as the change, so an
 * event exists exactly when its change committed; webhooks (issue 31) deliver from that outbox.
 * Names follow `<resource>.<past-tense change>`, the webhook event types integrators will see.
 */
export type DomainEvent =
  | {
      type: 'signal.created';
      organizationId: string;
      subjectId: string;
      payload: { signalId: string; sessionId: string; applicationId: string; source: 'explicit_feedback' | 'qualitative_inference' };
    }
  | {
      type: 'agent_session.processed';
      organizationId: string;
      subjectId: string;
      /** `processedThrough`: the session's contiguous processing watermark after this pass. */
      payload: { sessionId: string; applicationId: string; processedThrough: number | null; status: string };
    }
  | {
      type: 'agent_session.billing_blocked' | 'agent_session.billing_resumed';
      organizationId: string;
      subjectId: string;
      payload: { sessionId: string; applicationId: string };
    }
  | {
      type: 'recording.media_ready';
      organizationId: string;
      subjectId: string;
      payload: { recordingId: string; ingestionId: string };
    }
  | {
      type: 'recording.media_failed';
      organizationId: string;
      subjectId: string;
      /** `ingestionId` null: a meeting's recorder failed before any media existed (`recorder_failed`). */
      payload: { recordingId: string; ingestionId: string | null; errorCode: string };
    }
  | {
      type: 'recording.transcript_completed';
      organizationId: string;
      subjectId: string;
      /** `api`: supplied with the recording's create; `automatic`: transcribed from its media. */
      payload: { recordingId: string; source: 'api' | 'automatic' };
    }
  | {
      type: 'meeting_join.ended';
      organizationId: string;
      subjectId: string;
      /**
       * A meeting join is identified by its recording (the join answers `{recordingId}`). `reason`:
       * why a bot failed (`waiting_room_timeout`, `max_duration`, `recorder_unreachable`, …).
       */
      payload: { recordingId: string; botState: 'done' | 'failed'; reason: string | null };
    };

export type DomainEventType = DomainEvent['type'];

export const DOMAIN_EVENT_TYPES: readonly DomainEventType[] = [
  'signal.created',
  'agent_session.processed',
  'agent_session.billing_blocked',
  'agent_session.billing_resumed',
  'recording.media_ready',
  'recording.media_failed',
  'recording.transcript_completed',
  'meeting_join.ended',
];
