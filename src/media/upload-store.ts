import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import { ERRORS, Upload, type DataStore } from '@tus/utils';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config, S3Settings } from '../config.js';
import { resolveFromRoot } from '../paths.js';
import { s3ClientConfig } from './s3-client.js';

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
  /** A local path of the complete upload, to probe and encode; null when its bytes are gone. */
  localFile(uploadId: string): Promise<string | null>;
  /** Deletes the upload's bytes and record; nothing to delete is fine. */
  remove(uploadId: string): Promise<void>;
}

/** What every tus datastore gives alike: creation for a declared size and the stored offset. */
abstract class DatastoreUploadStore<D extends DataStore> implements UploadStore {
  constructor(readonly datastore: D) {}

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

  abstract localFile(uploadId: string): Promise<string | null>;
  abstract remove(uploadId: string): Promise<void>;
}

export class FileUploadStore extends DatastoreUploadStore<FileStore> {
  constructor(private readonly directory: string) {
    super(new FileStore({ directory }));
  }

  async localFile(uploadId: string): Promise<string | null> {
    const file = path.join(this.directory, uploadId);
    return existsSync(file) ? file : null;
  }

  async remove(uploadId: string): Promise<void> {
    try {
      await this.datastore.remove(uploadId);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
}

/**
 * `@tus/s3-store` leaves objects behind on removal: a completed upload (aborting its finished
 * multipart upload fails first) and the short trailing part of an unfinished one (`<id>.part`).
 */
class BucketStore extends S3Store {
  async purge(uploadId: string): Promise<void> {
    try {
      await this.remove(uploadId);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    await this.client.deleteObjects({
      Bucket: this.bucket,
      Delete: { Objects: [uploadId, `${uploadId}.info`, `${uploadId}.part`].map((Key) => ({ Key })), Quiet: true },
    });
  }
}

/**
 * Uploads in an S3-compatible bucket (`@tus/s3-store`: a multipart upload per tus upload, the
 * object named by the upload id, its tus record beside it as `<id>.info`). API processes share
 * nothing but the bucket. The worker copies a complete upload to `scratchDir` to encode it.
 */
export class S3UploadStore extends DatastoreUploadStore<BucketStore> {
  constructor(
    settings: S3Settings,
    private readonly scratchDir: string,
  ) {
    super(
      new BucketStore({
        partSize: settings.partSizeBytes,
        s3ClientConfig: { bucket: settings.bucket, ...s3ClientConfig(settings) },
      }),
    );
  }

  async localFile(uploadId: string): Promise<string | null> {
    const target = path.join(this.scratchDir, uploadId);
    await mkdir(this.scratchDir, { recursive: true });
    let body: Readable;
    try {
      body = await this.datastore.read(uploadId);
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
    await pipeline(body, createWriteStream(`${target}.partial`));
    await rename(`${target}.partial`, target);
    return target;
  }

  async remove(uploadId: string): Promise<void> {
    await this.datastore.purge(uploadId);
    await rm(path.join(this.scratchDir, uploadId), { force: true });
  }
}

function isMissing(error: unknown): boolean {
  return error === ERRORS.FILE_NOT_FOUND || error === ERRORS.FILE_NO_LONGER_EXISTS;
}

/** The uploads directory under STORAGE_DIR. */
export function uploadsDirectory(mediaDir: string): string {
  return path.join(mediaDir, 'uploads');
}

/** The configured upload store: files under STORAGE_DIR/uploads, or an S3-compatible bucket. */
export function createUploadStore(media: Pick<Config['media'], 'dir' | 'uploadStore'>): UploadStore {
  const dir = resolveFromRoot(media.dir);
  if (media.uploadStore.kind === 's3') return new S3UploadStore(media.uploadStore, path.join(dir, 'incoming'));
  return new FileUploadStore(uploadsDirectory(dir));
}
