import type { DatabasePool } from 'slonik';
import { lockOrganizationUploads, recordUploadBytes, reservedUploadBytes, type IngestionRow } from '../db/repositories/media-ingestions.js';
import { AppError } from '../errors.js';

/**
 * The first bytes of a direct upload reserve its whole declared size against the organization's
 * storage quota (UPLOAD_STORAGE_QUOTA_BYTES), decided under a per-organization lock so that two
 * uploads that begin at once cannot both take the last room. Creates keep accepting any `fileSize`
 * the contract allows: the quota is what bytes may arrive. An upload that began is reserved already;
 * its later requests only record that bytes arrive.
 */
export async function admitUploadBytes(pool: DatabasePool, upload: IngestionRow, quotaBytes: number): Promise<void> {
  if (upload.began_at) {
    await recordUploadBytes(pool, upload.id, null);
    return;
  }
  await pool.transaction(async (tx) => {
    await lockOrganizationUploads(tx, upload.organization_id);
    const reserved = await reservedUploadBytes(tx, upload.organization_id, upload.id);
    const size = upload.file_size ?? 0;
    if (reserved + size > quotaBytes) {
      throw new AppError('storage_quota_exceeded', {
        message: `This upload's ${size} bytes do not fit in the organization's storage quota of ${quotaBytes} bytes (${reserved} in use); cancel or finish other uploads, or ask the operator for a larger quota.`,
        details: { quotaBytes, usedBytes: reserved, fileSize: size },
      });
    }
    await recordUploadBytes(tx, upload.id, null);
  });
}
