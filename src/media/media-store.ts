import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config, S3Settings } from '../config.js';
import { resolveFromRoot } from '../paths.js';
import { s3ClientConfig } from './s3-client.js';

/**
 * Every byte of media Intake keeps between activities and for playback (URL downloads under
 * `incoming/`, renditions under `renditions/`), by key. Two implementations: a directory (the
 * embedded default, STORAGE_DIR) and an S3-compatible bucket (MEDIA_STORE=s3: AWS, R2, SeaweedFS, Ceph),
 * which every API replica and worker share. Workers keep only scratch files an activity creates and
 * deletes (`withLocalCopy`, a file to `put`).
 */
export interface MediaStore {
  readonly kind: 'file' | 's3';
  /** Stores a local file under `key`, replacing what was there; the file is moved or copied, and may be deleted after. */
  put(key: string, file: string, contentType?: string): Promise<void>;
  /** Runs `use` with a local path of the object (a scratch copy for a bucket, deleted after); null when it is missing. */
  withLocalCopy<T>(key: string, scratchDir: string, use: (file: string | null) => Promise<T>): Promise<T>;
  exists(key: string): Promise<boolean>;
  /** Deletes the object; nothing to delete is fine. */
  delete(key: string): Promise<void>;
  /** Deletes every object under the folder `prefix` (`renditions/<recordingId>`): how many there were. */
  deleteFolder(prefix: string): Promise<number>;
  /** For playback. A directory: the object's absolute path (served with byte ranges). A bucket: a presigned GET URL for `seconds`. */
  playback(key: string, seconds: number): Promise<{ file: string } | { url: string }>;
}

/** Keys are the service's own (`incoming/<uuid>`, `renditions/<uuid>/<uuid>.<ext>`), checked anyway: no way out of the store. */
function checked(key: string): string {
  if (!/^[a-z]+(?:\/[0-9a-z.-]+)+$/.test(key) || key.split('/').some((part) => part === '..' || part === '.'))
    throw new Error(`invalid media key: ${key}`);
  return key;
}

export class DirectoryMediaStore implements MediaStore {
  readonly kind = 'file';
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    return path.join(this.root, ...checked(key).split('/'));
  }

  async put(key: string, file: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    // The same file system (scratch under STORAGE_DIR): a rename; else a copy.
    await rename(file, partial).catch(async () => copyFile(file, partial));
    await rename(partial, target);
  }

  async withLocalCopy<T>(key: string, _scratchDir: string, use: (file: string | null) => Promise<T>): Promise<T> {
    const file = this.pathOf(key);
    return use((await this.exists(key)) ? file : null);
  }

  async exists(key: string): Promise<boolean> {
    return (await stat(this.pathOf(key)).catch(() => null))?.isFile() ?? false;
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deleteFolder(prefix: string): Promise<number> {
    const dir = this.pathOf(prefix);
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    await rm(dir, { recursive: true, force: true });
    return entries.filter((entry) => entry.isFile()).length;
  }

  async playback(key: string): Promise<{ file: string }> {
    return { file: this.pathOf(key) };
  }
}

export class BucketMediaStore implements MediaStore {
  readonly kind = 's3';
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings & { prefix: string }) {
    this.client = new S3Client(s3ClientConfig(settings));
  }

  private objectKey(key: string): string {
    return `${this.settings.prefix}${checked(key)}`;
  }

  async put(key: string, file: string, contentType?: string): Promise<void> {
    // Multipart for large files, in parts of S3_PART_SIZE_BYTES.
    await new Upload({
      client: this.client,
      params: {
        Bucket: this.settings.bucket,
        Key: this.objectKey(key),
        Body: createReadStream(file),
        ...(contentType ? { ContentType: contentType } : {}),
      },
      partSize: this.settings.partSizeBytes,
      queueSize: 2,
    }).done();
  }

  async withLocalCopy<T>(key: string, scratchDir: string, use: (file: string | null) => Promise<T>): Promise<T> {
    await mkdir(scratchDir, { recursive: true });
    const file = path.join(scratchDir, `${checked(key).replaceAll('/', '_')}-${process.pid}-${Date.now()}`);
    try {
      let body: Readable;
      try {
        body = (await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }))).Body as Readable;
      } catch (error) {
        if (isMissing(error)) return await use(null);
        throw error;
      }
      await pipeline(body, createWriteStream(file));
      return await use(file);
    } finally {
      await rm(file, { force: true });
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
  }

  async deleteFolder(prefix: string): Promise<number> {
    let deleted = 0;
    // A page of at most 1,000 keys, deleted in one call, until none is left.
    for (;;) {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: `${this.objectKey(prefix)}/` }));
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
      if (!keys.length) return deleted;
      const answer = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.settings.bucket, Delete: { Objects: keys, Quiet: true } }),
      );
      const failed = answer.Errors?.[0];
      if (failed) throw new Error(`deleting ${failed.Key ?? 'an object'} failed: ${failed.Code ?? 'unknown'}`);
      deleted += keys.length;
    }
  }

  async playback(key: string, seconds: number): Promise<{ url: string }> {
    const command = new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) });
    return { url: await getSignedUrl(this.client, command, { expiresIn: Math.max(1, Math.ceil(seconds)) }) };
  }
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

/** The configured media store: STORAGE_DIR, or a bucket (MEDIA_STORE=s3, the S3_* settings, keys under `media/`). */
export function createMediaStore(media: Pick<Config['media'], 'dir' | 'mediaStore'>): MediaStore {
  if (media.mediaStore.kind === 's3') return new BucketMediaStore({ ...media.mediaStore, prefix: 'media/' });
  return new DirectoryMediaStore(resolveFromRoot(media.dir));
}
