import { UniqueIntegrityConstraintViolationError, type CommonQueryMethods } from 'slonik';
import type { FieldType } from '../domain/feedback-fields.js';
import { insertField, insertFolder, recordingsSourceId, type FieldRow, type FolderRow } from '../db/repositories/metadata.js';
import { ConflictError } from '../errors.js';

export async function createFolder(db: CommonQueryMethods, organizationId: string, name: string): Promise<FolderRow> {
  return insertFolder(db, organizationId, name.trim());
}

/** Fields belong to the organization's recordings source (created on demand); names are unique in it, case-insensitively. */
export async function createField(
  db: CommonQueryMethods,
  organizationId: string,
  input: { name: string; type: FieldType },
): Promise<FieldRow> {
  try {
    return await db.transaction(async (tx) => {
      const sourceId = await recordingsSourceId(tx, organizationId);
      return insertField(tx, { organizationId, sourceId, name: input.name.trim(), type: input.type });
    });
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) {
      throw new ConflictError(
        'metadata_field_exists',
        `A metadata field named '${input.name.trim()}' already exists in the recordings source.`,
      );
    }
    throw error;
  }
}
