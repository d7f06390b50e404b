import type { DatabasePool } from 'slonik';
import type { Config } from '../config.js';
import { ERASURE_PLACES } from '../domain/erasure-places.js';
import { snapshotTransaction } from '../db/repositories/exports.js';
import {
  addErasureCount,
  countErasurePlace,
  finishPersonErasure as finishErasure,
  findPersonErasure,
  insertPersonErasure,
  scrubErasurePlace,
  unfinishedPersonErasures,
  type ErasurePlace,
  type PersonErasureRow,
} from '../db/repositories/person-erasures.js';
import { findErasablePerson, lockPersonForErasure, tombstonePerson, type PersonRow } from '../db/repositories/people.js';
import { isUuid } from '../db/uuid.js';
import { NotFoundError } from '../errors.js';
import type { TemporalGateway } from '../temporal/gateway.js';
import { startPersonErasureWorkflow, type PersonErasureSettings } from './erasure-workflow.js';

/** Rows read per batch of a place's search. */
export const ERASURE_BATCH = 2000;

/** An erasure older than this without a finished workflow is started again by the media reconciler. */
export const PERSON_ERASURE_STRANDED_AFTER_SECONDS = 120;

/** A person by the `id` or the `uuid` the people API shows. */
function personRef(ref: string): { id: number } | { uuid: string } | null {
  if (/^[1-9]\d{0,15}$/.test(ref)) return { id: Number(ref) };
  return isUuid(ref) ? { uuid: ref } : null;
}

/**
 * What erasing a person would change, before anyone confirms it (the console lists it, issue 36):
 * the person, and per place the rows the erasure would change now (feedback records: delete). One
 * read-only snapshot; nothing is changed. Data that arrives before the erasure runs is erased too.
 */
export async function previewErasure(
  pool: DatabasePool,
  organizationId: string,
  ref: { personId: string } | { email: string },
): Promise<{ person: PersonRow; counts: Record<ErasurePlace, number> }> {
  const which = 'email' in ref ? { email: ref.email } : personRef(ref.personId);
  if (!which) throw new NotFoundError('Person');
  return pool.transaction(async (tx) => {
    await snapshotTransaction(tx);
    const person = await findErasablePerson(tx, organizationId, which);
    if (!person) throw new NotFoundError('Person');
    const subject = { organizationId, personId: person.id, email: person.email };
    const counts = {} as Record<ErasurePlace, number>;
    for (const place of ERASURE_PLACES) counts[place] = await countErasurePlace(tx, place, subject);
    return { person, counts };
  });
}

/**
 * Erases a person of the organization (issue 32, point 2). One transaction makes the person a
 * tombstone (same row, identity gone: participants keep their counts) and writes the erasure, its
 * audit record; `person-erasure/<id>` then searches the organization's data for the address
 * (feedback records, participants, events, signals, transcripts, metadata, coding sessions, domain
 * events, webhook deliveries) and finishes it. Temporal unreachable leaves the start to the media
 * reconciler (as it does without a gateway: the CLI with no Temporal). An erased (or unknown)
 * person is 404.
 */
export async function erasePerson(
  deps: {
    pool: DatabasePool;
    temporal: TemporalGateway | null;
    config: Pick<Config, 'temporal' | 'media'>;
    logger: { warn(o: object, message: string): void };
  },
  organizationId: string,
  ref: string,
  requestedBy: string,
): Promise<PersonErasureRow> {
  const which = personRef(ref);
  if (!which) throw new NotFoundError('Person');
  const erasure = await deps.pool.transaction(async (tx) => {
    const person = await lockPersonForErasure(tx, organizationId, which);
    if (!person) throw new NotFoundError('Person');
    await tombstonePerson(tx, person.id);
    return insertPersonErasure(tx, {
      organizationId,
      personId: person.id,
      personUuid: person.uuid,
      email: person.email,
      requestedBy,
      counts: { people: 1 },
    });
  });
  if (deps.temporal === null) return { ...erasure, email: null };
  const settings = { taskQueue: deps.config.temporal.taskQueue, heartbeatTimeoutSeconds: deps.config.media.heartbeatTimeoutSeconds };
  await startPersonErasureWorkflow(deps.temporal, settings, { organizationId, erasureId: erasure.id }).catch((error: unknown) =>
    deps.logger.warn(
      { err: error, erasureId: erasure.id },
      'person erased; the erasure workflow did not start (the media reconciler starts it)',
    ),
  );
  return { ...erasure, email: null };
}

/** An erasure of the organization (its audit record), without the address. */
export async function findErasure(pool: DatabasePool, organizationId: string, erasureId: string): Promise<PersonErasureRow> {
  const erasure = isUuid(erasureId) ? await findPersonErasure(pool, erasureId, organizationId) : null;
  if (!erasure) throw new NotFoundError('Erasure');
  return { ...erasure, email: null };
}

/**
 * Searches one place for the erasure's address, a batch per transaction from `after` (the last
 * batch's key, which `progress` is told after each batch): how many rows it changed, or null when
 * the erasure is finished already.
 */
export async function erasePersonIn(
  pool: DatabasePool,
  erasureId: string,
  place: ErasurePlace,
  o: { after: string | null; progress: (after: string, changed: number) => void; batch?: number },
): Promise<number | null> {
  const erasure = await findPersonErasure(pool, erasureId);
  if (!erasure || erasure.finished_at || erasure.email === null) return null;
  const subject = { organizationId: erasure.organization_id, personId: erasure.person_id, email: erasure.email };
  let after = o.after;
  let changed = 0;
  for (;;) {
    const batch = await pool.transaction(async (tx) => {
      const done = await scrubErasurePlace(tx, place, subject, after, o.batch ?? ERASURE_BATCH);
      await addErasureCount(tx, erasureId, place, done.changed);
      return done;
    });
    changed += batch.changed;
    if (batch.last === null) return changed;
    after = batch.last;
    o.progress(after, changed);
  }
}

export async function finishPersonErasure(pool: DatabasePool, erasureId: string): Promise<void> {
  await finishErasure(pool, erasureId);
}

/** Open erasures older than PERSON_ERASURE_STRANDED_AFTER_SECONDS get their workflow: how many were started. */
export async function resumePersonErasures(
  pool: DatabasePool,
  temporal: TemporalGateway,
  settings: PersonErasureSettings,
  limit: number,
): Promise<number> {
  let started = 0;
  for (const erasure of await unfinishedPersonErasures(pool, PERSON_ERASURE_STRANDED_AFTER_SECONDS, limit)) {
    const outcome = await startPersonErasureWorkflow(temporal, settings, {
      organizationId: erasure.organization_id,
      erasureId: erasure.id,
    });
    if (outcome === 'started') started += 1;
  }
  return started;
}
