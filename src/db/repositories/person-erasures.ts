import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { ErasurePlace } from '../../domain/erasure-places.js';
import type { Tx } from '../pool.js';
import { sessionScrubTarget } from './agent-sessions.js';
import { recordingScrubTargets } from './recordings.js';
import {
  contains,
  countScrubTarget,
  erasedIdentifier,
  needleOf,
  scrubBatch,
  scrubbedJson,
  scrubbedKey,
  scrubbedText,
  type ScrubBatch,
  type ScrubTarget,
} from './text-scrub.js';

export const personErasureRow = z.object({
  id: z.string(),
  organization_id: z.string(),
  person_id: z.number(),
  person_uuid: z.string(),
  email: z.string().nullable(),
  requested_by: z.string(),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
  counts: z.record(z.string(), z.number()),
});
export type PersonErasureRow = z.infer<typeof personErasureRow>;

const COLUMNS = sql.fragment`id, organization_id, person_id, person_uuid, email, requested_by, requested_at, finished_at, counts`;

export async function insertPersonErasure(
  tx: Tx,
  e: { organizationId: string; personId: number; personUuid: string; email: string; requestedBy: string; counts: Record<string, number> },
): Promise<PersonErasureRow> {
  return tx.one(sql.type(personErasureRow)`
    INSERT INTO person_erasures (organization_id, person_id, person_uuid, email, requested_by, counts)
    VALUES (${e.organizationId}, ${e.personId}, ${e.personUuid}, ${e.email}, ${e.requestedBy}, ${sql.jsonb(e.counts)})
    RETURNING ${COLUMNS}`);
}

export async function findPersonErasure(db: CommonQueryMethods, id: string, organizationId?: string): Promise<PersonErasureRow | null> {
  const scope = organizationId === undefined ? sql.fragment`` : sql.fragment`AND organization_id = ${organizationId}`;
  return db.maybeOne(sql.type(personErasureRow)`SELECT ${COLUMNS} FROM person_erasures WHERE id = ${id} ${scope}`);
}

/** The erasure is over: its address is forgotten, its counts kept. */
export async function finishPersonErasure(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE person_erasures SET email = NULL, finished_at = now() WHERE id = ${id} AND finished_at IS NULL`);
}

export async function addErasureCount(db: CommonQueryMethods, id: string, place: string, changed: number): Promise<void> {
  if (changed === 0) return;
  await db.query(sql.unsafe`
    UPDATE person_erasures SET counts = counts || jsonb_build_object(${place}::text, coalesce((counts ->> ${place})::int, 0) + ${changed})
    WHERE id = ${id}`);
}

export async function unfinishedPersonErasures(
  db: CommonQueryMethods,
  olderThanSeconds: number,
  limit: number,
): Promise<PersonErasureRow[]> {
  return [
    ...(await db.any(sql.type(personErasureRow)`
      SELECT ${COLUMNS} FROM person_erasures
      WHERE finished_at IS NULL AND requested_at < now() - make_interval(secs => ${olderThanSeconds})
      ORDER BY requested_at LIMIT ${limit}`)),
  ];
}

export type { ErasurePlace };

/** The scrub of one place for one erasure: the person's rows by id, and any row whose text holds the e-mail. */
function targetOf(place: ErasurePlace, erasure: { organizationId: string; personId: number; email: string }): ScrubTarget {
  const needle = needleOf(erasure.email);
  const org = sql.fragment`t.organization_id = ${erasure.organizationId}`;
  // The rows under a session go a batch of the organization's sessions at a time (agent_sessions_organization_id_idx).
  const underSessions = { table: 'agent_sessions', fk: 'session_id' };
  const json = (column: string) => ({
    match: contains(sql.fragment`${sql.identifier(['c', column])}`, needle),
    set: sql.fragment`${sql.identifier([column])} = ${scrubbedJson(sql.fragment`${sql.identifier(['c', column])}`, needle)}`,
  });
  switch (place) {
    case 'feedback_records':
      // Deleted: the person's records, and records naming them.
      return {
        table: 'feedback_records',
        key: 'id',
        keyType: 'int8',
        scope: org,
        match: sql.fragment`(c.person_id = ${erasure.personId} OR ${contains(sql.fragment`concat_ws(' ', c.external_id, c.fields::text)`, needle)})`,
      };
    case 'agent_participants': {
      const identity = sql.fragment`concat_ws(' ', c.email, c.external_id, c.display_name, c.username, c.participant_key, c.company_external_id,
        c.properties::text)`;
      return {
        table: 'agent_participants',
        key: 'id',
        keyType: 'uuid',
        parent: underSessions,
        scope: org,
        match: sql.fragment`(c.person_id = ${erasure.personId} OR ${contains(identity, needle)})`,
        // The participant stays (counts), without identity; a key or external id that holds the address is replaced.
        set: sql.fragment`email = NULL, display_name = NULL, username = NULL, properties = NULL,
          external_id = CASE WHEN ${contains(sql.fragment`c.external_id`, needle)} THEN NULL ELSE c.external_id END,
          company_external_id = CASE WHEN ${contains(sql.fragment`c.company_external_id`, needle)} THEN NULL ELSE c.company_external_id END,
          participant_key = CASE WHEN ${contains(sql.fragment`c.participant_key`, needle)} THEN 'erased:' || c.id ELSE c.participant_key END,
          updated_at = now()`,
      };
    }
    case 'agent_sessions':
      return sessionScrubTarget(erasure.organizationId, needle);
    case 'agent_events':
      // The external id is the integrator's key within the session, quoted by signals and feedback targets (see scrubbedKey).
      return {
        table: 'agent_events',
        key: 'id',
        keyType: 'uuid',
        parent: underSessions,
        scope: org,
        match: contains(sql.fragment`concat_ws(' ', c.external_event_id, c.payload::text)`, needle),
        set: sql.fragment`payload = ${scrubbedJson(sql.fragment`c.payload`, needle)},
          external_event_id = ${scrubbedKey(needle, { table: 'agent_events', column: 'external_event_id', within: ['session_id'] })}`,
      };
    case 'agent_event_revisions':
      return {
        table: 'agent_event_revisions',
        key: 'id',
        keyType: 'uuid',
        // A revision names its session since migrations 0036-0038, through an index of its own.
        parent: underSessions,
        scope: org,
        ...json('payload'),
      };
    case 'agent_signals': {
      // The event a signal names, as the events' search (an earlier place) left it: a signal of inference names its own
      // event; an explicit one its feedback's target, which the same text replacement keeps naming (scrubbedKey).
      const eventId = scrubbedText(sql.fragment`c.event_external_id`, needle);
      const named = sql.fragment`CASE WHEN c.source = 'qualitative_inference'
        THEN coalesce((SELECT e.external_event_id FROM agent_events e WHERE e.session_id = c.session_id AND e.id = c.event_id), ${eventId}) ELSE ${eventId} END`;
      return {
        table: 'agent_signals',
        key: 'id',
        keyType: 'uuid',
        scope: org,
        match: contains(sql.fragment`concat_ws(' ', c.event_external_id, c.comment, c.summary, array_to_string(c.labels, ' '))`, needle),
        set: sql.fragment`comment = ${scrubbedText(sql.fragment`c.comment`, needle)}, summary = ${scrubbedText(sql.fragment`c.summary`, needle)},
          labels = ARRAY(SELECT ${scrubbedText(sql.fragment`l`, needle)} FROM unnest(c.labels) AS l),
          event_external_id = CASE WHEN ${contains(sql.fragment`c.event_external_id`, needle)} THEN ${named} ELSE c.event_external_id END`,
      };
    }
    case 'recordings':
    case 'transcript_utterances':
      return recordingScrubTargets(erasure.organizationId, needle)[place];
    case 'metadata_values':
      return {
        table: 'metadata_values',
        key: 'id',
        keyType: 'uuid',
        parent: { table: 'metadata_records', fk: 'record_id' },
        scope: org,
        ...json('value'),
      };
    case 'coding_sessions':
      return {
        table: 'coding_sessions',
        key: 'id',
        keyType: 'uuid',
        scope: org,
        match: sql.fragment`${contains(sql.fragment`concat_ws(' ', c.title, c.external_id, c.events::text)`, needle)}`,
        set: sql.fragment`title = ${scrubbedText(sql.fragment`c.title`, needle)}, events = ${scrubbedJson(sql.fragment`c.events`, needle)},
          external_id = ${erasedIdentifier(needle, { table: 'coding_sessions', column: 'external_id', within: ['organization_id'] })}`,
      };
    case 'metadata_records':
      // A record's external id is the integrator's key (unique per source): one that held the address becomes `erased:<id>`.
      return {
        table: 'metadata_records',
        key: 'id',
        keyType: 'uuid',
        scope: org,
        match: contains(sql.fragment`c.external_id`, needle),
        set: sql.fragment`external_id = ${erasedIdentifier(needle, { table: 'metadata_records', column: 'external_id', within: ['source_id'] })}`,
      };
    case 'media_ingestions':
      return {
        table: 'media_ingestions',
        key: 'id',
        keyType: 'uuid',
        scope: org,
        match: contains(sql.fragment`c.file_name`, needle),
        set: sql.fragment`file_name = ${scrubbedText(sql.fragment`c.file_name`, needle)}, updated_at = now()`,
      };
    case 'domain_events':
      return { table: 'domain_events', key: 'id', keyType: 'int8', scope: org, ...json('payload') };
    case 'webhook_deliveries':
      return {
        table: 'webhook_deliveries',
        key: 'id',
        keyType: 'text',
        scope: org,
        match: sql.fragment`(${contains(sql.fragment`c.body`, needle)} OR ${contains(sql.fragment`c.last_error`, needle)})`,
        set: sql.fragment`body = ${scrubbedText(sql.fragment`c.body`, needle)}, last_error = ${scrubbedText(sql.fragment`c.last_error`, needle)}`,
      };
    case 'webhook_delivery_attempts':
      // What receivers answered (an excerpt) may echo the body.
      return {
        table: 'webhook_delivery_attempts',
        key: 'id',
        keyType: 'text',
        parent: { table: 'webhook_deliveries', fk: 'delivery_id' },
        scope: org,
        match: sql.fragment`(${contains(sql.fragment`c.response_excerpt`, needle)} OR ${contains(sql.fragment`c.error`, needle)})`,
        set: sql.fragment`response_excerpt = ${scrubbedText(sql.fragment`c.response_excerpt`, needle)}, error = ${scrubbedText(sql.fragment`c.error`, needle)}`,
      };
  }
}

/** One batch of one place's scrub (see text-scrub.ts). */
export async function scrubErasurePlace(
  db: CommonQueryMethods,
  place: ErasurePlace,
  erasure: { organizationId: string; personId: number; email: string },
  after: string | null,
  limit: number,
): Promise<ScrubBatch> {
  return scrubBatch(db, targetOf(place, erasure), after, limit);
}

/** How many rows of one place an erasure of this person would change (feedback records: delete). */
export async function countErasurePlace(
  db: CommonQueryMethods,
  place: ErasurePlace,
  subject: { organizationId: string; personId: number; email: string },
): Promise<number> {
  return countScrubTarget(db, targetOf(place, subject));
}
