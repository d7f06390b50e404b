import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so that operators can find workflows in the Temporal UI by
 * organization, recording, session, status and progress (e.g. `IntakeOrganizationId = "…"`).
 */
export const ORGANIZATION_ID = defineSearchAttributeKey('IntakeOrganizationId', SearchAttributeType.KEYWORD);
export const RECORDING_ID = defineSearchAttributeKey('IntakeRecordingId', SearchAttributeType.KEYWORD);
export const SESSION_ID = defineSearchAttributeKey('IntakeSessionId', SearchAttributeType.KEYWORD);
export const STATUS = defineSearchAttributeKey('IntakeStatus', SearchAttributeType.KEYWORD);
/** An agent session's `processedThroughSequence` (absent until the first event is processed). */
export const PROCESSED_THROUGH = defineSearchAttributeKey('IntakeProcessedThroughSequence', SearchAttributeType.INT);
/** An agent session's `processingStatus` (pending, billing_blocked, capture_disabled). */
export const PROCESSING_STATUS = defineSearchAttributeKey('IntakeProcessingStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [ORGANIZATION_ID, RECORDING_ID, SESSION_ID, STATUS, PROCESSED_THROUGH, PROCESSING_STATUS];
