import { FIELD_TYPES, type FieldType } from '../../domain/feedback-fields.js';
import { createField, createFolder } from '../../recordings/catalog.js';
import { flags, str } from '../args.js';
import { CliError, type CliContext } from '../context.js';
import { createBatch } from '../../db/repositories/media-ingestions.js';
import { requireOrganization, requireUser } from './tenancy.js';

function name(value: string): string {
  if (value.length > 200) throw new CliError('--name must be at most 200 characters', 2);
  return value;
}

export async function folderCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', name: 'string' });
  const org = await requireOrganization(ctx, str(f, 'org'));
  const folder = await createFolder(await ctx.db(), org.id, name(str(f, 'name')));
  return { folderId: folder.id, name: folder.name };
}

export async function metadataFieldCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { org: 'string', name: 'string', type: 'string' });
  const type = str(f, 'type');
  if (!(FIELD_TYPES as readonly string[]).includes(type)) throw new CliError(`--type must be one of: ${FIELD_TYPES.join(', ')}`, 2);
  const org = await requireOrganization(ctx, str(f, 'org'));
  const field = await createField(await ctx.db(), org.id, { name: name(str(f, 'name')), type: type as FieldType });
  return { fieldId: field.id, name: field.name, type: field.type };
}

/** An upload batch of a user (batches are user-scoped: uploads with a `batchId` need that user's token). */
export async function batchCreate(ctx: CliContext, argv: string[]) {
  const f = flags(argv, { user: 'string' });
  const user = await requireUser(ctx, str(f, 'user'));
  return { batchId: await createBatch(await ctx.db(), user.organization_id, user.id), userId: user.id };
}
