import { checkFieldValues } from '../../src/domain/feedback-fields.js';
import { toUtcInstantOrNull } from '../../src/domain/time.js';
import {
  createSource,
  deleteRecord,
  deleteSource,
  findRecord,
  findSource,
  insertRecord,
  listRecords,
  listSources,
  type SourceRow,
} from '../../src/db/repositories/feedback.js';
import { listPeople, upsertPerson } from '../../src/db/repositories/people.js';
import { credentialOf } from '../../src/auth/principal.js';
import { presentPersonErasure, type ErasurePreview, type ErasurePreviewQuery } from '../../src/contracts/person-erasures.js';
import { erasePerson, findErasure, previewErasure } from '../../src/people/erasure.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.js';
import type { AppContext, AppDeps } from '../context.js';
import { principalOf } from '../middleware/auth.js';
import { pageBody, pageWindow } from '../paging.js';
import type { RouteInput } from '../routes.js';
import {
  presentPerson,
  presentRecord,
  presentSource,
  type CreateRecordBody,
  type CreateSourceBody,
  type PageQuery,
  type PeopleQuery,
  type RecordsQuery,
  type UpsertPersonBody,
} from './schemas.js';

/** Feedback ids are integers; anything else cannot name a row and reads as unknown (404). */
function intId(value: string | undefined): number | null {
  return value && /^[1-9]\d{0,14}$/.test(value) ? Number(value) : null;
}

export function feedbackHandlers(deps: AppDeps) {
  const sourceOf = async (ctx: AppContext, id: string | undefined): Promise<SourceRow> => {
    const sourceId = intId(id);
    const source = sourceId === null ? null : await findSource(deps.pool, principalOf(ctx).organizationId, sourceId);
    if (!source) throw new NotFoundError('Feedback source');
    return source;
  };

  return {
    createSource: async (ctx: AppContext, { body, db }: RouteInput<CreateSourceBody, unknown>) => {
      const source = await createSource(db, principalOf(ctx).organizationId, { name: body.name.trim(), type: body.type });
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/feedback-sources/${source.id}`);
      ctx.body = presentSource(source);
    },

    listSources: async (ctx: AppContext, { query }: RouteInput<unknown, PageQuery>) => {
      const rows = await listSources(deps.pool, principalOf(ctx).organizationId, pageWindow(query));
      ctx.body = pageBody('feedback_sources', rows, query, presentSource);
    },

    getSource: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = presentSource(await sourceOf(ctx, params.id));
    },

    upsertPerson: async (ctx: AppContext, { body }: RouteInput<UpsertPersonBody, unknown>) => {
      const { person, created } = await deps.pool.transaction((tx) =>
        upsertPerson(tx, {
          organizationId: principalOf(ctx).organizationId,
          email: body.email.trim(),
          firstName: body.first_name,
          lastName: body.last_name,
          boundary: body.boundary,
          company: body.company && { name: body.company.name.trim(), domain: body.company.domain.trim() },
        }),
      );
      ctx.status = created ? 201 : 200;
      ctx.body = presentPerson(person);
    },

    listPeople: async (ctx: AppContext, { query }: RouteInput<unknown, PeopleQuery>) => {
      const rows = await listPeople(deps.pool, principalOf(ctx).organizationId, { email: query.email, ...pageWindow(query) });
      ctx.body = pageBody('people', rows, query, presentPerson);
    },

    createRecord: async (ctx: AppContext, { body, params }: RouteInput<CreateRecordBody, unknown>) => {
      const fieldErrors = checkFieldValues(body.fields);
      if (fieldErrors.length) throw new ValidationError(fieldErrors);
      const sourceId = intId(params.id);
      if (sourceId === null) throw new NotFoundError('Feedback source');
      const result = await insertRecord(deps.pool, {
        organizationId: principalOf(ctx).organizationId,
        sourceId,
        personId: body.person_id ?? null,
        externalId: body.external_id,
        displayTs: toUtcInstantOrNull(body.display_ts),
        fields: body.fields,
      });
      if ('missing' in result) throw new NotFoundError(result.missing === 'source' ? 'Feedback source' : 'Person');
      if ('duplicateOf' in result) {
        throw new ConflictError('duplicate_external_id', `A record with external_id '${body.external_id}' already exists in this source.`, {
          id: result.duplicateOf,
        });
      }
      ctx.status = 201;
      ctx.set('Location', `/v3/rest/feedback-sources/${sourceId}/records/${result.record.id}`);
      ctx.body = presentRecord(result.record);
    },

    listRecords: async (ctx: AppContext, { params, query }: RouteInput<unknown, RecordsQuery>) => {
      const source = await sourceOf(ctx, params.id);
      const rows = await listRecords(deps.pool, source.organization_id, source.id, { externalId: query.external_id, ...pageWindow(query) });
      ctx.body = pageBody('records', rows, query, presentRecord);
    },

    getRecord: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const source = await sourceOf(ctx, params.id);
      const recordId = intId(params.recordId);
      const record = recordId === null ? null : await findRecord(deps.pool, source.organization_id, source.id, recordId);
      if (!record) throw new NotFoundError('Feedback record');
      ctx.body = presentRecord(record);
    },

    deleteRecord: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const source = await sourceOf(ctx, params.id);
      const recordId = intId(params.recordId);
      const deleted = recordId === null ? null : await deleteRecord(deps.pool, source.organization_id, source.id, recordId);
      if (deleted === null) throw new NotFoundError('Feedback record');
      ctx.status = 204;
    },

    erasePerson: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const principal = principalOf(ctx);
      const erasure = await erasePerson(deps, principal.organizationId, params.personId ?? '', credentialOf(principal));
      ctx.status = 202;
      ctx.set('Location', `/v3/rest/people/erasures/${erasure.id}`);
      ctx.body = presentPersonErasure(erasure);
    },

    previewErasure: async (ctx: AppContext, { query }: RouteInput<unknown, ErasurePreviewQuery>) => {
      const ref = query.email !== undefined ? { email: query.email } : { personId: query.personId ?? '' };
      const { person, counts } = await previewErasure(deps.pool, principalOf(ctx).organizationId, ref);
      const preview: ErasurePreview = {
        person: {
          personId: person.id,
          personUuid: person.uuid,
          email: person.email,
          firstName: person.first_name,
          lastName: person.last_name,
        },
        counts,
      };
      ctx.body = preview;
    },

    getErasure: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      ctx.body = presentPersonErasure(await findErasure(deps.pool, principalOf(ctx).organizationId, params.erasureId ?? ''));
    },

    deleteSource: async (ctx: AppContext, { params }: RouteInput<unknown, unknown>) => {
      const sourceId = intId(params.id);
      const deleted = sourceId === null ? null : await deleteSource(deps.pool, principalOf(ctx).organizationId, sourceId);
      if (deleted === null) throw new NotFoundError('Feedback source');
      ctx.status = 204;
    },
  };
}
