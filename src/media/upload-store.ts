import { FileStore } from '@tus/file-store';
import { ERRORS, Upload, type DataStore } from '@tus/utils';
import path from 'node:path';
import { resolveFromRoot } from '../paths.js';

/** How far a direct upload has come: bytes stored of the declared size. */
export interface UploadProgress {
  offset: number;
  size: number;
}

/**
 * Where direct uploads' bytes go: the tus datastore the API's tus endpoint writes through, and what
 * the worker needs of it (progress, the complete file, cleanup). The file store keeps each upload
 * as `<dir>/<uploadId>` with its tus record beside it; the API and the worker share the directory
 * (STORAGE_DIR).
 */
export interface UploadStore {
  readonly datastore: DataStore;
  /** Creates the tus resource for the declared size (an upload is created once, by the service). */
  create(uploadId: string, size: number): Promise<void>;
  /** Null when there is no such upload (never created, or removed). */
  progress(uploadId: string): Promise<UploadProgress | null>;
  /** A local path of the complete upload, to probe and encode. */
  localFile(uploadId: string): Promise<string>;
  /** Deletes the upload's bytes and record; nothing to delete is fine. */
  remove(uploadId: string): Promise<void>;
}

export class FileUploadStore implements UploadStore {
  readonly datastore: FileStore;

  constructor(private readonly directory: string) {
    this.datastore = new FileStore({ directory });
  }

  async create(uploadId: string, size: number): Promise<void> {
    await this.datastore.create(new Upload({ id: uploadId, size, offset: 0, creation_date: new Date().toISOString() }));
  }

  async progress(uploadId: string): Promise<UploadProgress | null> {
    try {
      const upload = await this.datastore.getUpload(uploadId);
      return { offset: upload.offset, size: upload.size ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async localFile(uploadId: string): Promise<string> {
    return path.join(this.directory, uploadId);
  }

  async remove(uploadId: string): Promise<void> {
    try {
      await this.datastore.remove(uploadId);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
}

function isMissing(error: unknown): boolean {
  return error === ERRORS.FILE_NOT_FOUND || error === ERRORS.FILE_NO_LONGER_EXISTS;
}

/** The uploads directory under STORAGE_DIR. */
export function uploadsDirectory(mediaDir: string): string {
  return path.join(mediaDir, 'uploads');
}

/** The configured upload store: files under STORAGE_DIR/uploads. */
export function createUploadStore(media: { dir: string }): UploadStore {
  return new FileUploadStore(uploadsDirectory(resolveFromRoot(media.dir)));
}
