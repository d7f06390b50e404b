import { createField, createFolder } from '../../../src/recordings/catalog.js';
import { listFields, listFolders } from '../../../src/db/repositories/metadata.js';
import type { AppContext, AppDeps } from '../../context.js';
import { principalOf, type AuthRequirement } from '../../middleware/auth.js';
import { pageBody, pageQuery, pageWindow, type PageQuery } from '../../paging.js';
import type { RouteInput, RouteRegistry } from '../../routes.js';
import {
  createFieldBody,
  createFolderBody,
  fieldPageSchema,
  fieldSchema,
  folderPageSchema,
  folderSchema,
  presentField,
  presentFolder,
  type CreateFieldBody,
  type CreateFolderBody,
} from './schemas.js';

/** Folders and metadata fields of the recordings area: listed by readers, created by admins. */
export function recordingCatalogRoutes(deps: AppDeps, registry: RouteRegistry): void {
  const read: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'recordings:read' };
  const admin: AuthRequirement = { accept: ['apiKey', 'user'], scope: 'admin' };
  const tags = ['recordings'];
  const org = (ctx: AppContext) => principalOf(ctx).organizationId;

  registry.add({
    method: 'post',
    path: '/v3/rest/folders',
    operationId: 'createFolder',
    tags,
    auth: admin,
    idempotent: true,
    summary: 'Create a folder (admin)',
    body: { schema: createFolderBody },
    responses: { 201: { description: 'The folder', schema: folderSchema } },
    handler: async (ctx, { body, db }: RouteInput<CreateFolderBody, unknown>) => {
      const folder = await createFolder(db, org(ctx), body.name);
      ctx.status = 201;
      ctx.body = presentFolder(folder);
    },
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/folders',
    operationId: 'listFolders',
    tags,
    auth: read,
    query: pageQuery,
    summary: 'List folders',
    responses: {
      200: {
        description: 'A page of folders',
        schema: folderPageSchema,
      },
    },
    handler: async (ctx, { query }: RouteInput<unknown, PageQuery>) => {
      ctx.body = pageBody('folders', await listFolders(deps.pool, org(ctx), pageWindow(query)), query, presentFolder);
    },
  });
  registry.add({
    method: 'post',
    path: '/v3/rest/metadata-fields',
    operationId: 'createMetadataField',
    tags,
    auth: admin,
    idempotent: true,
    summary: 'Create a typed metadata field of the recordings source (admin)',
    body: { schema: createFieldBody },
    responses: {
      201: { description: 'The field', schema: fieldSchema },
    },
    errors: ['metadata_field_exists'],
    handler: async (ctx, { body, db }: RouteInput<CreateFieldBody, unknown>) => {
      const field = await createField(db, org(ctx), body);
      ctx.status = 201;
      ctx.body = presentField(field);
    },
  });
  registry.add({
    method: 'get',
    path: '/v3/rest/metadata-fields',
    operationId: 'listMetadataFields',
    tags,
    auth: read,
    query: pageQuery,
    summary: 'List metadata fields',
    responses: {
      200: { description: 'A page of fields', schema: fieldPageSchema },
    },
    handler: async (ctx, { query }: RouteInput<unknown, PageQuery>) => {
      ctx.body = pageBody('fields', await listFields(deps.pool, org(ctx), pageWindow(query)), query, presentField);
    },
  });
}
