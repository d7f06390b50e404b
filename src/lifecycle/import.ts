import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { StringDecoder } from 'node:string_decoder';
import type { ErrorObject } from 'ajv/dist/2020.js';
import { createAjv, errorMessage, errorPath } from '../contracts/ajv.js';
import type { FromSchema } from 'json-schema-to-ts';
import { IntegrityConstraintViolationError, type DatabasePool } from 'slonik';
import { EXPORT_LINE_SCHEMAS } from '../contracts/export.js';
import { importEvents, importSessions, settleImportedSessions, type ImportedSession } from '../db/repositories/agent-sessions.js';
import { EXPORT_KINDS, type ExportKind } from '../db/repositories/exports.js';
import {
  importAgentParticipants,
  importApplications,
  importFeedbackRecords,
  importPeople,
  importSignals,
  importSources,
  lockOrganizationForImport,
  usersByEmail,
} from '../db/repositories/imports.js';
import { insertField, insertFolder, recordingsSourceId } from '../db/repositories/metadata.js';
import { importRecordings, type ImportedRecording } from '../db/repositories/recordings.js';
import type { Tx } from '../db/pool.js';
import type { ExportCounts } from './export.js';

/** Lines written per statement. */
export const IMPORT_BATCH = 1000;
/** A line longer than this is refused before it is parsed (a recording with a 10,000-utterance transcript is about 2 MB). */
export const MAX_IMPORT_LINE_CHARACTERS = 64 * 1024 * 1024;

/** Why an import wrote nothing: the file's line and what is wrong with it. */
export class ImportRefused extends Error {
  override name = 'ImportRefused';
}

export interface ImportResult {
  organizationId: string;
  /** The organization the file was exported from, and when. */
  exportedFrom: { organizationId: string; exportedAt: string };
  counts: ExportCounts;
  /**
   * E-mails the file names as users (conversation access, restrictions, participants' owners) that
   * are not users of this organization: left out, so access is only ever narrower than the export's.
   */
  usersNotFound: string[];
}

type Schemas = typeof EXPORT_LINE_SCHEMAS;
type LineOf<K extends keyof Schemas> = FromSchema<Schemas[K]>;
type AnyLine = { [K in keyof Schemas]: LineOf<K> }[keyof Schemas];

const ajv = createAjv({ allErrors: false });
const validators = new Map(Object.entries(EXPORT_LINE_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'is not valid';
  const at = errorPath(error);
  return `${at ? `${at}: ` : ''}${errorMessage(error)}`;
}

/**
 * Splits a byte stream into lines without ever holding more than one line and a chunk: a line
 * longer than `maxCharacters` is refused, whatever the file is.
 */
export async function* ndjsonLines(
  input: AsyncIterable<Buffer | string>,
  maxCharacters = MAX_IMPORT_LINE_CHARACTERS,
): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let lineNo = 0;
  const tooLong = () => new ImportRefused(`line ${lineNo + 1} is longer than ${maxCharacters} characters`);
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n', start)) {
      if (nl - start > maxCharacters) throw tooLong();
      lineNo += 1;
      yield pending.slice(start, nl);
      start = nl + 1;
    }
    pending = pending.slice(start);
    if (pending.length > maxCharacters) throw tooLong();
  }
  pending += decoder.end();
  if (pending.length) yield pending;
}

/**
 * Imports an export (src/lifecycle/export.ts) into an organization that holds none of its kinds
 * of data (issue 32, point 3), in one transaction: a file cut short (no `end` line), a line that
 * breaks its schema, a reference to a line the file does not have, or counts that differ from the
 * `end` line's, and nothing is imported. Everything gets new ids, with the file's references kept
 * between lines; see docs/guides/data-lifecycle.md and decision 0194 for what an import keeps.
 */
export async function importOrganization(
  pool: DatabasePool,
  organizationId: string,
  lines: AsyncIterable<string>,
  o: { batch?: number } = {},
): Promise<ImportResult> {
  return pool.transaction(async (tx) => {
    const holds = await lockOrganizationForImport(tx, organizationId);
    if (holds === null) throw new ImportRefused(`organization ${organizationId} does not exist`);
    if (holds.length) throw new ImportRefused(`an import needs an empty organization, and this one holds ${holds.join(', ')}`);
    const importer = new Importer(tx, organizationId, await usersByEmail(tx, organizationId));
    const batchSize = o.batch ?? IMPORT_BATCH;
    let lineNo = 0;
    let header: LineOf<'export'> | null = null;
    let end: LineOf<'end'> | null = null;
    let kindIndex = -1;
    let batch: { kind: ExportKind; first: number; lines: AnyLine[] } | null = null;
    const flush = async () => {
      const b = batch;
      batch = null;
      if (!b?.lines.length) return;
      try {
        await importer.write(b.kind, b.first, b.lines);
      } catch (error) {
        // Two lines the database cannot hold together (the same e-mail twice, a second record with an external id).
        if (!(error instanceof IntegrityConstraintViolationError)) throw error;
        const last = b.first + b.lines.length - 1;
        throw new ImportRefused(`lines ${b.first}-${last} (${b.kind}) break ${error.constraint ?? 'a constraint'}; nothing was imported`);
      }
    };
    for await (const text of lines) {
      lineNo += 1;
      const refuse = (why: string) => new ImportRefused(`line ${lineNo}: ${why}; nothing was imported`);
      if (end) throw refuse('comes after the end line');
      let line: unknown;
      try {
        line = JSON.parse(text);
      } catch {
        throw refuse('is not JSON');
      }
      const type = (line as { type?: unknown } | null)?.type;
      const validate = typeof type === 'string' ? validators.get(type) : undefined;
      if (!validate) throw refuse(`has no known type (${JSON.stringify(type ?? null)})`);
      if (!validate(line)) throw refuse(`(${String(type)}) ${describe(validate.errors?.[0])}`);
      const valid = line as AnyLine;
      if (lineNo === 1) {
        if (valid.type !== 'export') throw refuse('an export starts with its export line');
        header = valid;
        continue;
      }
      if (valid.type === 'export') throw refuse('a second export line');
      if (valid.type === 'end') {
        await flush();
        end = valid;
        continue;
      }
      const index = EXPORT_KINDS.indexOf(valid.type);
      if (index < kindIndex)
        throw refuse(`a ${valid.type} line after ${EXPORT_KINDS[kindIndex]} lines (an export lists ${valid.type} lines first)`);
      kindIndex = index;
      if (batch && (batch.kind !== valid.type || batch.lines.length >= batchSize)) await flush();
      batch ??= { kind: valid.type, first: lineNo, lines: [] };
      batch.lines.push(valid);
    }
    if (!header) throw new ImportRefused('the file is empty; nothing was imported');
    if (!end) throw new ImportRefused(`the file ends at line ${lineNo} without its end line (cut short?); nothing was imported`);
    for (const kind of EXPORT_KINDS) {
      if (end.counts[kind] !== importer.counts[kind])
        throw new ImportRefused(
          `the end line counts ${end.counts[kind]} ${kind} lines and the file has ${importer.counts[kind]}; nothing was imported`,
        );
    }
    await settleImportedSessions(tx, organizationId);
    return {
      organizationId,
      exportedFrom: { organizationId: header.organizationId, exportedAt: header.exportedAt },
      counts: importer.counts,
      usersNotFound: [...importer.usersNotFound].sort(),
    };
  });
}

/** The id maps of one import (the file's ids to the new ones) and the writes of each kind of line. */
class Importer {
  readonly counts = Object.fromEntries(EXPORT_KINDS.map((k) => [k, 0])) as ExportCounts;
  readonly usersNotFound = new Set<string>();
  private readonly sources = new Map<number, number>();
  /** The file's person uuid: the new uuid and row id. */
  private readonly people = new Map<string, { uuid: string; id: number }>();
  private readonly applications = new Map<string, { id: string; contentCapture: boolean }>();
  private readonly sessions = new Map<string, string>();
  private readonly folders = new Map<string, string>();
  private readonly fields = new Map<string, { id: string; type: string }>();
  private recordingsSource: string | null = null;

  constructor(
    private readonly tx: Tx,
    private readonly organizationId: string,
    private readonly users: Map<string, string>,
  ) {}

  async write(kind: ExportKind, first: number, lines: AnyLine[]): Promise<void> {
    const at = (i: number) => first + i;
    switch (kind) {
      case 'feedback_source':
        await this.writeSources(lines as LineOf<'feedback_source'>[], at);
        break;
      case 'person':
        await this.writePeople(lines as LineOf<'person'>[], at);
        break;
      case 'feedback_record':
        await this.writeFeedbackRecords(lines as LineOf<'feedback_record'>[], at);
        break;
      case 'recording':
        await this.writeRecordings(lines as LineOf<'recording'>[], at);
        break;
      case 'agent_application':
        await this.writeApplications(lines as LineOf<'agent_application'>[], at);
        break;
      case 'agent_session':
        await this.writeSessions(lines as LineOf<'agent_session'>[], at);
        break;
      case 'agent_event':
        await importEvents(
          this.tx,
          (lines as LineOf<'agent_event'>[]).map((e, i) => ({
            session_id: this.session(e.sessionId, at(i)),
            external_event_id: e.externalEventId,
            sequence: e.sequence,
            revision: e.revision,
            type: e.eventType,
            occurred_at: e.occurredAt,
            final: e.final,
            content_hash: e.contentHash,
            payload: e.payload,
          })),
        );
        break;
      case 'agent_signal':
        await importSignals(
          this.tx,
          this.organizationId,
          (lines as LineOf<'agent_signal'>[]).map((g, i) => ({
            id: randomUUID(),
            session_id: this.session(g.sessionId, at(i)),
            event_external_id: g.eventExternalId,
            event_revision: g.eventRevision,
            producer: g.producer,
            source: g.source,
            kind: g.kind,
            rating: g.rating,
            labels: g.labels,
            comment: g.comment,
            summary: g.summary,
            created_at: g.createdAt,
          })),
        );
        break;
    }
    this.counts[kind] += lines.length;
  }

  private async writeSources(lines: LineOf<'feedback_source'>[], at: (i: number) => number) {
    lines.forEach((s, i) => {
      if (this.sources.has(s.id)) throw refused(at(i), `feedback source ${s.id} is listed twice`);
    });
    const ids = await importSources(
      this.tx,
      this.organizationId,
      lines.map((s) => ({ old_id: s.id, name: s.name, type: s.sourceType, created_at: s.createdAt })),
    );
    for (const [old, id] of ids) this.sources.set(old, id);
  }

  private async writePeople(lines: LineOf<'person'>[], at: (i: number) => number) {
    const fresh = lines.map((p, i) => {
      if (this.people.has(p.id.toLowerCase())) throw refused(at(i), `person ${p.id} is listed twice`);
      return { old: p.id.toLowerCase(), uuid: randomUUID() };
    });
    const ids = await importPeople(
      this.tx,
      this.organizationId,
      lines.map((p, i) => ({
        uuid: fresh[i]!.uuid,
        email: p.email,
        first_name: p.firstName,
        last_name: p.lastName,
        boundary: p.boundary,
        company_name: p.company?.name ?? null,
        company_domain: p.company?.domain ?? null,
        erased: p.erased,
        created_at: p.createdAt,
      })),
    );
    for (const f of fresh) this.people.set(f.old, { uuid: f.uuid, id: ids.get(f.uuid)! });
  }

  private async writeFeedbackRecords(lines: LineOf<'feedback_record'>[], at: (i: number) => number) {
    await importFeedbackRecords(
      this.tx,
      this.organizationId,
      lines.map((r, i) => {
        const source = this.sources.get(r.sourceId);
        if (source === undefined) throw refused(at(i), `sourceId ${r.sourceId} is not a feedback source of the file`);
        return {
          source_id: source,
          person_id: r.personId === null ? null : this.person(r.personId, at(i)).id,
          external_id: r.externalId,
          display_ts: r.displayTs,
          fields: r.fields,
          created_at: r.createdAt,
        };
      }),
    );
  }

  private async writeRecordings(lines: LineOf<'recording'>[], at: (i: number) => number) {
    const recordings: ImportedRecording[] = [];
    for (const [i, r] of lines.entries()) {
      const folderIds = [];
      for (const name of new Set(r.folders)) folderIds.push(await this.folder(name));
      let record: ImportedRecording['record'] = null;
      if (r.metadata) {
        const values = [];
        for (const v of r.metadata.values) values.push({ field_id: await this.field(v.field, v.fieldType, at(i)), value: v.value });
        record = { id: randomUUID(), external_id: r.metadata.externalId, values };
      }
      recordings.push({
        id: randomUUID(),
        name: r.name,
        source: r.source,
        recorded_at: r.recordedAt,
        // Media is not exported: a transcript that waited for it waits again.
        transcript_status: r.transcriptStatus === 'processing' ? 'waiting' : r.transcriptStatus,
        transcript_source: r.transcriptSource,
        created_at: r.createdAt,
        folder_ids: folderIds,
        participants: r.participants.map((p) => ({ speaker: p.speaker, person_id: this.person(p.personId, at(i)).id })),
        utterances: r.utterances,
        record,
      });
    }
    await importRecordings(this.tx, this.organizationId, await this.recordingsSourceId(), recordings);
  }

  private async writeApplications(lines: LineOf<'agent_application'>[], at: (i: number) => number) {
    const apps = lines.map((a, i) => {
      if (this.applications.has(a.id.toLowerCase())) throw refused(at(i), `agent application ${a.id} is listed twice`);
      const id = randomUUID();
      this.applications.set(a.id.toLowerCase(), { id, contentCapture: a.contentCapture });
      return {
        id,
        name: a.name,
        agent_key: a.agentKey,
        status: a.status,
        content_capture: a.contentCapture,
        redacted_field_names: a.redactedFieldNames,
        redacted_text_patterns: a.redactedTextPatterns,
        retention_days: a.retentionDays,
        allowed_environments: a.allowedEnvironments,
        access: a.access,
        access_user_ids: this.userIds(a.accessUserEmails),
        deleted: a.deleted,
        created_at: a.createdAt,
      };
    });
    await importApplications(this.tx, this.organizationId, apps);
  }

  private async writeSessions(lines: LineOf<'agent_session'>[], at: (i: number) => number) {
    const sessions: ImportedSession[] = lines.map((s, i) => {
      const app = this.applications.get(s.applicationId.toLowerCase());
      if (!app) throw refused(at(i), `applicationId ${s.applicationId} is not an agent application of the file`);
      if (this.sessions.has(s.id.toLowerCase())) throw refused(at(i), `agent session ${s.id} is listed twice`);
      // Time-ordered, as the column's default makes them: the session's events go to this week's partition (decision 0216).
      const id = uuidv7();
      this.sessions.set(s.id.toLowerCase(), id);
      return {
        id,
        application_id: app.id,
        external_session_id: s.externalSessionId,
        status: s.status,
        // Processed as far as the export's signals go: the watermark is set at the last event (settleImportedSessions).
        processing_status: app.contentCapture ? 'pending' : 'capture_disabled',
        agent_version: s.agentVersion,
        source: s.source ?? null,
        context: s.context ?? null,
        restricted_to: s.restrictedToUserEmails === null ? null : this.userIds(s.restrictedToUserEmails),
        created_at: s.createdAt,
        ended_at: s.endedAt,
      };
    });
    await importSessions(this.tx, this.organizationId, sessions);
    await importAgentParticipants(
      this.tx,
      lines.flatMap((s, i) =>
        s.participants.map((p) => ({
          session_id: this.sessions.get(s.id.toLowerCase())!,
          participant_key: p.participantKey,
          external_id: p.externalId,
          display_name: p.displayName,
          username: p.username,
          email: p.email,
          person_id: p.personId === null ? null : this.person(p.personId, at(i)).id,
          company_external_id: p.companyExternalId,
          boundary: p.boundary,
          owner_user_id: p.ownerUserEmail === null ? null : (this.userIds([p.ownerUserEmail])[0] ?? null),
          properties: p.properties,
        })),
      ),
    );
  }

  private person(fileId: string, line: number) {
    const person = this.people.get(fileId.toLowerCase());
    if (!person) throw refused(line, `personId ${fileId} is not a person of the file`);
    return person;
  }

  private session(fileId: string, line: number): string {
    const id = this.sessions.get(fileId.toLowerCase());
    if (!id) throw refused(line, `sessionId ${fileId} is not an agent session of the file`);
    return id;
  }

  /** The users of this organization with these e-mails; the others are remembered as not found. */
  private userIds(emails: readonly string[]): string[] {
    return emails.flatMap((email) => {
      const id = this.users.get(email.toLowerCase());
      if (!id) this.usersNotFound.add(email.toLowerCase());
      return id ? [id] : [];
    });
  }

  private async recordingsSourceId(): Promise<string> {
    this.recordingsSource ??= await recordingsSourceId(this.tx, this.organizationId);
    return this.recordingsSource;
  }

  /** Folders are exported by name: one folder per name. */
  private async folder(name: string): Promise<string> {
    let id = this.folders.get(name);
    if (!id) {
      id = (await insertFolder(this.tx, this.organizationId, name)).id;
      this.folders.set(name, id);
    }
    return id;
  }

  /** Metadata fields are exported by name (unique in the recordings source, in any case) and type. */
  private async field(name: string, type: string, line: number): Promise<string> {
    const key = name.toLowerCase();
    let field = this.fields.get(key);
    if (!field) {
      const row = await insertField(this.tx, {
        organizationId: this.organizationId,
        sourceId: await this.recordingsSourceId(),
        name,
        type: type as Parameters<typeof insertField>[1]['type'],
      });
      field = { id: row.id, type: row.type };
      this.fields.set(key, field);
    }
    if (field.type !== type) throw refused(line, `metadata field '${name}' is ${type} here and ${field.type} on an earlier line`);
    return field.id;
  }
}

function refused(line: number, why: string): ImportRefused {
  return new ImportRefused(`line ${line}: ${why}; nothing was imported`);
}
