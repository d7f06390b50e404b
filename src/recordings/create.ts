import { randomUUID } from 'node:crypto';
import type { DatabasePool, CommonQueryMethods } from 'slonik';
import type { Principal } from '../auth/principal.js';
import { assetUrlProblem } from '../domain/asset-url.js';
import { insertIngestion } from '../db/repositories/media-ingestions.js';
import { valueMismatch } from '../domain/feedback-fields.js';
import { toUtcInstantOrNull } from '../domain/time.js';
import { missingSpeakers, transcriptErrors } from '../domain/transcript.js';
import { peopleByUuid } from '../db/repositories/agent-participants.js';
import { fieldsByIds, folderIdsIn, recordingsSourceId } from '../db/repositories/metadata.js';
import { upsertPerson } from '../db/repositories/people.js';
import type { Tx } from '../db/pool.js';
import {
  insertParticipants,
  insertRecord,
  insertRecording,
  insertUtterances,
  insertValues,
  linkFolders,
} from '../db/repositories/recordings.js';
import { AppError, NotFoundError, ValidationError, type FieldError } from '../errors.js';
import type { CreateRecordingBody, PersonAssignment } from '../contracts/recordings.js';

export type { CreateRecordingBody, PersonAssignment };

/** Spec 409 body: `{message: recording-external-id-conflict, recordingId}`; the caller treats it as recovery. */
export class ExternalIdConflict extends AppError {
  constructor(recordingId: string | null) {
    super('recording_external_id_conflict', { details: { recordingId } });
  }
}

/** Spec 422: a metadata field of another source, or a value that does not match the field's type. */
class MetadataValueError extends AppError {
  constructor(details: { externalId: string; fieldId: string; fieldType: string; reason: string }) {
    super('invalid_metadata_value', { message: `Metadata field ${details.fieldId}: ${details.reason}.`, details });
  }
}

/** The 400s decided on the body alone, before anything is started or written. */
export function validateRecordingBody(body: CreateRecordingBody, allowedHosts: readonly string[] = []): void {
  const errors = bodyErrors(body, body.record.externalId.trim(), allowedHosts);
  if (errors.length) throw new ValidationError(errors);
}

/** The 400s decided on the body alone (before anything is written). */
function bodyErrors(body: CreateRecordingBody, externalId: string, allowedHosts: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  if (externalId.length < 1 || externalId.length > 512)
    errors.push({ path: 'body.record.externalId', message: 'must be 1 to 512 characters after trimming' });
  const seen = new Set<string>();
  (body.record.values ?? []).forEach((v, i) => {
    const id = v.fieldId.toLowerCase();
    if (seen.has(id))
      errors.push({ path: `body.record.values.${i}.fieldId`, message: 'repeats a metadata field; a field may appear once' });
    seen.add(id);
  });
  if (body.assetUrl !== undefined) {
    const problem = assetUrlProblem(body.assetUrl, allowedHosts);
    if (problem) errors.push({ path: 'body.assetUrl', message: problem });
  }
  const utterances = body.transcript?.utterances;
  if (utterances) {
    errors.push(...transcriptErrors(utterances));
    for (const speaker of missingSpeakers(
      (body.participants ?? []).map((p) => p.speaker),
      utterances,
    )) {
      errors.push({ path: 'body.participants', message: `speaker ${speaker} appears in no utterance of the transcript` });
    }
  }
  return errors;
}

/**
 * Creates the recording, its folder links, canonical record and values, participants and transcript
 * in one transaction: any error (400, 404, 409, 422) leaves nothing behind, not even the external id.
 */
export async function createRecording(
  pool: DatabasePool,
  principal: Principal,
  body: CreateRecordingBody,
  ids: { recordingId: string; ingestionId: string | null } = { recordingId: randomUUID(), ingestionId: null },
  allowedHosts: readonly string[] = [],
): Promise<string> {
  validateRecordingBody(body, allowedHosts);
  const externalId = body.record.externalId.trim();
  const organizationId = principal.organizationId;
  return pool.transaction(async (tx) => {
    const sourceId = await recordingsSourceId(tx, organizationId);
    const recordingId = await insertRecording(tx, {
      id: ids.recordingId,
      organizationId,
      name: body.name ?? 'Untitled recording',
      recordedAt: toUtcInstantOrNull(body.recordedAt),
      assetSourceUrl: body.assetUrl ?? null,
      transcriptSupplied: body.transcript !== undefined,
      createdBy: {
        userId: principal.kind === 'user' ? principal.userId : null,
        apiKeyId: principal.kind === 'apiKey' ? principal.apiKeyId : null,
      },
    });
    const record = await insertRecord(tx, { organizationId, sourceId, externalId, recordingId });
    if ('existingRecordingId' in record) throw new ExternalIdConflict(record.existingRecordingId);
    await insertValues(tx, record.recordId, await checkedValues(tx, organizationId, sourceId, externalId, body.record.values ?? []));
    await linkFolders(tx, recordingId, await resolvedFolders(tx, organizationId, body.folderIds ?? []));
    await insertParticipants(tx, recordingId, await resolvedParticipants(tx, organizationId, body.participants ?? []));
    await insertUtterances(tx, recordingId, body.transcript?.utterances ?? []);
    // URL media: the ingestion its workflow (already started) waits for, committed with the recording.
    if (body.assetUrl !== undefined && ids.ingestionId)
      await insertIngestion(tx, { id: ids.ingestionId, organizationId, recordingId, kind: 'url' });
    return recordingId;
  });
}

async function checkedValues(
  tx: CommonQueryMethods,
  organizationId: string,
  sourceId: string,
  externalId: string,
  values: readonly { fieldId: string; value: unknown }[],
) {
  const fields = await fieldsByIds(
    tx,
    organizationId,
    values.map((v) => v.fieldId),
  );
  return values.map((v) => {
    const field = fields.get(v.fieldId.toLowerCase());
    if (!field) throw new NotFoundError('Metadata field', { fieldId: v.fieldId });
    const base = { externalId, fieldId: field.id, fieldType: field.type };
    if (field.source_id !== sourceId) throw new MetadataValueError({ ...base, reason: 'the field belongs to another metadata source' });
    const mismatch = valueMismatch(field.type, v.value);
    if (mismatch) throw new MetadataValueError({ ...base, reason: `the value ${mismatch}` });
    return { fieldId: field.id, value: v.value };
  });
}

/** Set semantics: duplicates collapse; every folder must be the organization's (404 otherwise). */
async function resolvedFolders(tx: CommonQueryMethods, organizationId: string, folderIds: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(folderIds.map((f) => f.toLowerCase()))];
  const found = await folderIdsIn(tx, organizationId, wanted);
  const missing = wanted.find((f) => !found.has(f));
  if (missing) throw new NotFoundError('Folder', { folderId: missing });
  return wanted;
}

/**
 * References must name people of the organization (404); upserts create or update by e-mail.
 * Then, within the request, a speaker resolves to one person and a person to one speaker (400).
 */
async function resolvedParticipants(tx: Tx, organizationId: string, participants: NonNullable<CreateRecordingBody['participants']>) {
  const refs = participants.flatMap((p) => (p.person.type === 'reference' ? [p.person.personId.toLowerCase()] : []));
  const known = await peopleByUuid(tx, organizationId, refs);
  const pairs: { speaker: number; personId: number }[] = [];
  for (const p of participants) {
    let personId: number;
    if (p.person.type === 'reference') {
      const found = known.get(p.person.personId.toLowerCase());
      if (found === undefined) throw new NotFoundError('Person', { personId: p.person.personId });
      personId = found;
    } else {
      const { email, firstName, lastName } = p.person;
      personId = (await upsertPerson(tx, { organizationId, email: email.trim(), firstName, lastName })).person.id;
    }
    pairs.push({ speaker: p.speaker, personId });
  }
  return distinctAssignments(pairs);
}

function distinctAssignments(pairs: { speaker: number; personId: number }[]) {
  const bySpeaker = new Map<number, number>();
  const byPerson = new Map<number, number>();
  const errors: FieldError[] = [];
  pairs.forEach(({ speaker, personId }, i) => {
    if (bySpeaker.has(speaker) && bySpeaker.get(speaker) !== personId)
      errors.push({ path: `body.participants.${i}`, message: `speaker ${speaker} is assigned to several people` });
    if (byPerson.has(personId) && byPerson.get(personId) !== speaker)
      errors.push({ path: `body.participants.${i}`, message: 'this person is assigned to several speakers' });
    bySpeaker.set(speaker, personId);
    byPerson.set(personId, speaker);
  });
  if (errors.length) throw new ValidationError(errors, 'Participant assignments conflict.');
  return [...bySpeaker].map(([speaker, personId]) => ({ speaker, personId }));
}
