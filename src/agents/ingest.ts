import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { environmentErrors, planIngest, toIncoming, type IncomingEvent } from '../domain/agent-events.js';
import type { AgentIngestRequest, AgentParticipant, AgentSessionStatus } from '../domain/agent-ingest.js';
import { sanitizeIngestRequest } from '../domain/sanitize/index.js';
import type { ApplicationRow } from '../db/repositories/agent-applications.js';
import {
  activeUserIds, peopleByEmail, peopleByUuid, upsertParticipants, type ParticipantRecord,
} from '../db/repositories/agent-participants.js';
import {
  loadEventStates, lockSession, participantExternalIds, purgeSessionContent, reviseEvents, updateSessionAfterIngest,
} from '../db/repositories/agent-sessions.js';
import { ValidationError, type FieldError } from '../errors.js';

export type ProcessingStatus = 'pending' | 'billing_blocked' | 'capture_disabled';

export interface IngestResult {
  sessionId: string;
  organizationId: string;
  acceptedEventCount: number;
  deduplicatedEventCount: number;
  revisedEventCount: number;
  processingStatus: ProcessingStatus;
  status: AgentSessionStatus;
  highestSequence: number | null;
}

/**
 * One ingest request: sanitized first (nothing unsanitized is stored or compared), then applied in
 * a single transaction under the session's row lock. Any 400 or 409 rolls everything back.
 */
export async function ingestSession(
  pool: DatabasePool,
  app: ApplicationRow,
  raw: AgentIngestRequest,
  options: { analysisCreditCost: number },
): Promise<IngestResult> {
  const request = await sanitizeIngestRequest(raw, { redactedFieldNames: app.redacted_field_names, redactedTextPatterns: app.redacted_text_patterns });
  const envErrors = environmentErrors(request, app.allowed_environments);
  if (envErrors.length) throw new ValidationError(envErrors, 'The environment is missing or not allowed for this application.');
  const participants = participantRecords(request.participants ?? []);
  const incoming = request.events.map(toIncoming);
  return pool.transaction(async (tx) => {
    const session = await lockSession(tx, {
      organizationId: app.organization_id,
      applicationId: app.id,
      externalSessionId: request.externalSessionId,
      restrictedTo: app.access === 'users' ? app.access_user_ids : null,
    });
    const capture = app.content_capture;
    if (!capture) await purgeSessionContent(tx, session.id);
    const links = await linkParticipants(tx, app.organization_id, request.participants ?? [], participants);
    if (capture) await upsertParticipants(tx, session.id, links);
    const referencing = incoming.some((e) => e.participantExternalId !== null);
    const known = capture && referencing ? await participantExternalIds(tx, session.id) : null;
    const targets = incoming.flatMap((e) => (e.feedbackTarget === null ? [] : [e.feedbackTarget]));
    const stored = await loadEventStates(tx, session.id, [...incoming.map((e) => e.externalEventId), ...targets], incoming.map((e) => e.sequence));
    const plan = planIngest({ stored, incoming, sessionStatus: session.status, knownParticipants: known });
    await reviseEvents(tx, session.id, plan.revised.map((r) => r.event), capture);
    const status = session.status === 'open' && request.status && request.status !== 'open' ? request.status : session.status;
    // Work for the drainer: the session's wake is requested (once, however many ingests ask).
    const work = plan.accepted.length > 0 || plan.revised.length > 0 || status !== session.status;
    const updated = await updateSessionAfterIngest(tx, session.id, {
      status,
      captureContent: capture,
      analysisCreditCost: options.analysisCreditCost,
      agentVersion: capture ? (request.agentVersion ?? null) : null,
      source: capture ? (request.source ?? null) : null,
      context: capture ? (request.context ?? null) : null,
      newEvents: plan.accepted,
      highestSequence: maxSequence(plan.accepted),
      wake: work,
    });
    return {
      sessionId: session.id,
      organizationId: app.organization_id,
      acceptedEventCount: plan.accepted.length,
      deduplicatedEventCount: plan.deduplicated.length,
      revisedEventCount: plan.revised.length,
      processingStatus: updated.processing_status as ProcessingStatus,
      status: updated.status,
      highestSequence: updated.highest_sequence,
    };
  });
}

function maxSequence(events: readonly IncomingEvent[]): number | null {
  return events.length ? Math.max(...events.map((e) => e.sequence)) : null;
}

/** Participants keyed by externalId, or by their content when they have none; a repeated externalId is a 400. */
function participantRecords(participants: readonly AgentParticipant[]): ParticipantRecord[] {
  const seen = new Map<string, number>();
  const errors: FieldError[] = [];
  const records = participants.map((p, i) => {
    const key = p.externalId !== undefined ? `ext:${p.externalId}` : `anon:${createHash('sha256').update(stringify(p) ?? '').digest('hex')}`;
    if (p.externalId !== undefined && seen.has(key)) errors.push({ path: `body.participants.${i}.externalId`, message: `repeats participant ${seen.get(key)}` });
    seen.set(key, i);
    return {
      participant_key: key,
      external_id: p.externalId ?? null,
      display_name: p.displayName ?? null,
      username: p.username ?? null,
      email: p.email ?? null,
      person_uuid: p.personId?.toLowerCase() ?? null,
      company_external_id: p.companyExternalId ?? null,
      boundary: p.boundary ?? null,
      owner_user_id: p.ownerUserId?.toLowerCase() ?? null,
      properties: p.properties ?? null,
    };
  });
  if (errors.length) throw new ValidationError(errors);
  return records;
}

/**
 * Spec rule 6: an explicit personId must be a person of the organization (400 otherwise) and wins
 * over an e-mail match; a unique case-insensitive e-mail match links the person. People are never
 * created or changed here. An ownerUserId must be an active user of the organization.
 */
async function linkParticipants(tx: CommonQueryMethods, organizationId: string, raw: readonly AgentParticipant[], records: ParticipantRecord[]) {
  const byUuid = await peopleByUuid(tx, organizationId, records.flatMap((r) => (r.person_uuid ? [r.person_uuid] : [])));
  const byEmail = await peopleByEmail(tx, organizationId, raw.flatMap((p) => (p.email && !p.personId ? [p.email] : [])));
  const owners = await activeUserIds(tx, organizationId, records.flatMap((r) => (r.owner_user_id ? [r.owner_user_id] : [])));
  const errors: FieldError[] = [];
  const linked = records.map((r, i) => {
    if (r.person_uuid && !byUuid.has(r.person_uuid)) errors.push({ path: `body.participants.${i}.personId`, message: 'is not a person of this organization' });
    if (r.owner_user_id && !owners.has(r.owner_user_id)) errors.push({ path: `body.participants.${i}.ownerUserId`, message: 'is not an active user of this organization' });
    const email = raw[i]?.email?.toLowerCase();
    const personId = r.person_uuid ? (byUuid.get(r.person_uuid) ?? null) : email ? (byEmail.get(email) ?? null) : null;
    return { ...r, person_id: personId };
  });
  if (errors.length) throw new ValidationError(errors);
  return linked;
}
