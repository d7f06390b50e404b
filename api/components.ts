import { applicationSchema, credentialSchema, newCredentialSchema, type Credential } from '../src/contracts/agent-applications.js';
import { retrySchema } from '../src/contracts/retry.js';
import { uploadStatusSchema } from '../src/contracts/uploads.js';
import { webhookEndpointSchema, webhookEndpointWithSecretSchema, type WebhookEndpoint } from '../src/contracts/webhook-endpoints.js';
import {
  agentContextSchema,
  agentEventSchema,
  answerTotalsSchema,
  agentParticipantSchema,
  ingestResponse,
  sessionDetailSchema,
  sessionSchema,
  type AgentEventResponse,
  type AgentParticipantResponse,
  type AnswerTotals,
  type Session,
} from './agent-conversations/schemas.js';
import { fieldSchema as feedbackFieldSchema, personSchema, recordSchema, sourceSchema } from './feedback/schemas.js';
import { balanceSchema, organizationSchema, userSchema } from './management/schemas.js';
import { fieldSchema, folderSchema } from './recordings/catalog/schemas.js';
import {
  recordingListItemSchema,
  recordingSchema,
  transcriptEntrySchema,
  transcriptSchema,
  type TranscriptEntry,
} from './recordings/schemas.js';
import { meetingJoinStatusSchema } from './recordings/meeting-joins/schemas.js';
import { createdUploadSchema } from './recordings/uploads/schemas.js';
import { signalSchema, usageSchema } from './signals/schemas.js';
import type { JsonSchema, Validated } from './validation.js';

/** A named entity of /openapi.json: its schema (with its description) and an example of it. */
export interface NamedSchema {
  schema: JsonSchema;
  example: unknown;
}

/** An example typed by its schema: an example that stops matching the schema fails the typecheck. */
const named = <const S extends JsonSchema>(schema: S, example: Validated<S>): NamedSchema => ({ schema, example });

const ORG = '5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const APP = '0b7f5a52-6c1e-4f0e-9d3a-2e8c4b6a1f90';
const SESSION = 'c3e1a7d4-2b5f-4e8a-9c6d-1f0b3a5e7d92';
const RECORDING = '8d2f4b6a-1c3e-4a5b-9d7f-0e2c4a6b8d1f';
const FIELD = '2a4c6e8f-1b3d-4f5a-8c7e-9d0b2f4a6c8e';
const CREATED = '2026-03-02T09:15:00.000Z';
const UPDATED = '2026-03-02T09:20:00.000Z';

const webhookEndpoint: WebhookEndpoint = {
  id: '6a8c0e2f-4b6d-4f8a-9c1e-3b5d7f9a1c3e',
  url: 'https://hooks.example.com/intake',
  description: 'Sync to the CRM',
  eventTypes: ['recording.transcript_completed', 'signal.created'],
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  previousSecretExpiresAt: null,
  createdAt: CREATED,
  updatedAt: UPDATED,
};

const transcriptEntry: TranscriptEntry = { recordingId: RECORDING, startSec: 0, endSec: 4.2, speaker: 0, text: 'Thanks for joining.' };
const agentContext = { productArea: 'billing', surface: 'chat-widget', environment: 'production' };
const participant: AgentParticipantResponse = {
  externalId: 'user-42',
  displayName: 'Ada',
  username: null,
  email: 'ada@example.com',
  personId: null,
  companyExternalId: 'acme',
  boundary: 'external',
  ownerUserId: null,
  properties: null,
};
const event: AgentEventResponse = {
  externalEventId: 'evt-2',
  sequence: 2,
  revision: 1,
  type: 'assistant_message',
  occurredAt: CREATED,
  content: 'Your invoice is attached.',
  final: true,
  model: { provider: 'openai', name: 'gpt-4o' },
  usage: { inputTokens: 812, outputTokens: 64, latencyMs: 930 },
  contentStored: true,
  previousRevisionCount: 0,
};
const answerTotals: AnswerTotals = { answers: 1, answersWithUsage: 1, inputTokens: 812, outputTokens: 64, medianLatencyMs: 930 };
const session: Session = {
  sessionId: SESSION,
  applicationId: APP,
  applicationName: 'Support assistant',
  externalSessionId: 'chat-2026-03-02-0001',
  status: 'open',
  processingStatus: 'completed',
  processedThroughSequence: 2,
  highestSequence: 2,
  eventCount: 2,
  agentVersion: '1.4.0',
  source: { sdk: 'intake-js', version: '3.1.0' },
  context: agentContext,
  contentPurgedAt: null,
  endedAt: null,
  createdAt: CREATED,
  updatedAt: UPDATED,
};
const credential: Credential = {
  credentialId: '6e8a0c2d-4f1b-4a3c-8e5d-7f9b1d3a5c7e',
  applicationId: APP,
  displayPrefix: 'iak_3xY9',
  createdAt: CREATED,
  lastUsedAt: UPDATED,
  revokedAt: null,
};
const feedbackField = { category: 'content', type: 'string', name: 'comment', value: 'Checkout is slow.' } as const;

/**
 * The main entities of the API, named under `components.schemas` of /openapi.json: a response schema
 * (or a part of one) that is one of these objects is written there as a `$ref` to it.
 */
export const NAMED_SCHEMAS: Record<string, NamedSchema> = {
  Recording: named(recordingSchema, {
    id: RECORDING,
    name: 'Discovery call with Acme',
    recordedAt: CREATED,
    asset: {
      status: 'completed',
      url: `https://intake.example.com/v3/media/playback/${RECORDING}/video.mp4?expires=1772443200&signature=…`,
      errorCode: null,
    },
    transcript: { status: 'completed', source: 'api' },
    participants: [
      {
        speaker: 0,
        person: { id: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      },
    ],
    record: {
      id: '4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7b9d2f',
      externalId: 'crm-call-7781',
      source: { id: '9e7c5a3b-1d2f-4e6a-8b0c-2d4f6a8c0e1b', type: 'api', externalEntityName: 'recordings' },
      values: [{ fieldId: FIELD, name: 'deal stage', type: 'string', value: 'negotiation' }],
    },
    folderIds: ['7c9e1a3b-5d2f-4a6c-8e0b-3d5f7a9c1e2b'],
    createdAt: CREATED,
    updatedAt: UPDATED,
  }),
  RecordingListItem: named(recordingListItemSchema, {
    id: RECORDING,
    display_name: 'Discovery call with Acme',
    source: 'api',
    recorded_at: CREATED,
    created_at: CREATED,
    updated_at: UPDATED,
    metadata: [
      {
        source: { type: 'api', external_entity_name: 'recordings' },
        record: { external_id: 'crm-call-7781', fields: [{ field_id: FIELD, name: 'deal stage', type: 'string', value: 'negotiation' }] },
      },
    ],
  }),
  TranscriptEntry: named(transcriptEntrySchema, transcriptEntry),
  Transcript: named(transcriptSchema, { type: 'utterance', recordingId: RECORDING, utterances: [transcriptEntry] }),
  Upload: named(uploadStatusSchema, {
    recordingId: RECORDING,
    uploadId: '3f5a7c9e-1b2d-4f6a-8c0e-4a6c8e0b2d4f',
    phase: 'encoding',
    encodeProgress: 40,
    errorCode: null,
  }),
  RetryStatus: named(retrySchema, {
    errorCode: 'asset_dns_failed',
    message: "The media URL's host name could not be resolved (DNS: ENOTFOUND).",
    attempt: 3,
    nextAttemptAt: '2026-03-02T09:21:20.000Z',
  }),
  MeetingJoin: named(meetingJoinStatusSchema, {
    recordingId: RECORDING,
    platform: 'google_meet',
    botState: 'in_call',
    botStateSince: UPDATED,
    reason: null,
    retry: {
      errorCode: 'provider_unavailable',
      message: 'The provider is unavailable or overloaded.',
      attempt: 2,
      nextAttemptAt: '2026-03-02T09:20:10.000Z',
    },
    createdAt: CREATED,
    updatedAt: UPDATED,
  }),
  CreatedUpload: named(createdUploadSchema, {
    recordingId: RECORDING,
    uploadId: '3f5a7c9e-1b2d-4f6a-8c0e-4a6c8e0b2d4f',
    uploadUrl: 'https://intake.example.com/v3/uploads/3f5a7c9e-1b2d-4f6a-8c0e-4a6c8e0b2d4f.token',
    timeoutSeconds: 3600,
    phase: 'waiting',
  }),
  Folder: named(folderSchema, { folderId: '7c9e1a3b-5d2f-4a6c-8e0b-3d5f7a9c1e2b', name: 'Customer calls', createdAt: CREATED }),
  MetadataField: named(fieldSchema, {
    fieldId: FIELD,
    name: 'deal stage',
    type: 'string',
    source: { id: '9e7c5a3b-1d2f-4e6a-8b0c-2d4f6a8c0e1b', type: 'api', externalEntityName: 'recordings' },
    createdAt: CREATED,
  }),
  IngestResult: named(ingestResponse, {
    sessionId: SESSION,
    acceptedEventCount: 2,
    deduplicatedEventCount: 0,
    revisedEventCount: 0,
    processingStatus: 'pending',
  }),
  AgentContext: named(agentContextSchema, agentContext),
  Session: named(sessionSchema, session),
  AgentParticipant: named(agentParticipantSchema, participant),
  Event: named(agentEventSchema, event),
  AnswerTotals: named(answerTotalsSchema, answerTotals),
  SessionDetail: named(sessionDetailSchema, {
    ...session,
    participants: [participant],
    answerTotals,
    events: [event],
    nextAfterSequence: null,
  }),
  Signal: named(signalSchema, {
    id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
    sessionId: SESSION,
    applicationId: APP,
    eventExternalId: 'evt-2',
    source: 'qualitative_inference',
    kind: 'issue',
    rating: null,
    labels: ['billing'],
    comment: null,
    summary: 'The customer could not find last month’s invoice.',
    producer: 'analysis-v2',
    createdAt: UPDATED,
  }),
  Usage: named(usageSchema, {
    unit: 'agent_response_processed',
    from: '2026-03-01T00:00:00.000Z',
    to: '2026-03-02T10:00:00.000Z',
    applicationId: null,
    sessionId: null,
    quantity: 12,
    days: [
      { date: '2026-03-01', quantity: 5 },
      { date: '2026-03-02', quantity: 7 },
    ],
  }),
  Source: named(sourceSchema, { id: 3, name: 'In-app survey', type: 'api', created_at: CREATED }),
  FeedbackField: named(feedbackFieldSchema, feedbackField),
  FeedbackRecord: named(recordSchema, {
    id: 1201,
    person_id: 88,
    feedback_source_id: 3,
    display_ts: CREATED,
    external_id: 'survey-response-551',
    fields: [feedbackField],
    created_at: CREATED,
  }),
  Person: named(personSchema, {
    id: 88,
    uuid: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.com',
    boundary: 'external',
    company_id: 12,
    created_at: CREATED,
    updated_at: UPDATED,
  }),
  Application: named(applicationSchema, {
    applicationId: APP,
    organizationId: ORG,
    name: 'Support assistant',
    agentKey: 'support-assistant',
    status: 'active',
    contentCapture: true,
    redactedFieldNames: ['ssn'],
    redactedTextPatterns: [],
    retentionDays: 90,
    allowedEnvironments: ['production'],
    conversationAccess: { type: 'workspace' },
    createdAt: CREATED,
    updatedAt: UPDATED,
  }),
  Credential: named(credentialSchema, credential),
  NewCredential: named(newCredentialSchema, { ...credential, lastUsedAt: null, secret: 'iak_3xY9…' }),
  WebhookEndpoint: named(webhookEndpointSchema, webhookEndpoint),
  WebhookEndpointWithSecret: named(webhookEndpointWithSecretSchema, {
    ...webhookEndpoint,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
  Organization: named(organizationSchema, {
    organizationId: ORG,
    name: 'Acme',
    recordingAllowed: true,
    creditBalance: 5000,
    createdAt: CREATED,
    caller: {
      kind: 'user',
      role: 'member',
      scopes: ['feedback:write', 'feedback:read', 'recordings:read', 'recordings:write', 'agents:read', 'agents:write', 'signals:read'],
    },
  }),
  User: named(userSchema, {
    userId: 'd4c3b2a1-f6e5-4b7a-9c8d-2f1e0d9c8b7a',
    email: 'grace@example.com',
    firstName: 'Grace',
    lastName: 'Hopper',
    role: 'admin',
    status: 'active',
    createdAt: CREATED,
  }),
  Balance: named(balanceSchema, { organizationId: ORG, balance: 6000, resumedSessions: 1 }),
};
