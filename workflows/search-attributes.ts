import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes, so that operators can find workflows in the Temporal UI by
 * organization, recording, session and status (e.g. `IntakeOrganizationId = "…"`).
 */
export const ORGANIZATION_ID = defineSearchAttributeKey('IntakeOrganizationId', SearchAttributeType.KEYWORD);
export const RECORDING_ID = defineSearchAttributeKey('IntakeRecordingId', SearchAttributeType.KEYWORD);
export const SESSION_ID = defineSearchAttributeKey('IntakeSessionId', SearchAttributeType.KEYWORD);
export const STATUS = defineSearchAttributeKey('IntakeStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [ORGANIZATION_ID, RECORDING_ID, SESSION_ID, STATUS];
