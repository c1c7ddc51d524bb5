/** s3rver's FilesystemStore, described by the minimal interface the storage uses (s3rver has no type declarations). */
import { rmdirSync, unlinkSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE } from '../../shared/private-files.ts';
import { bucketDirectory, objectFiles, resourceFile, uploadDirectory } from './s3rver-layout.ts';

/** One of s3rver's subresource documents (an object's tags), as its store writes them. */
export interface S3rverSubresource {
  type: string;
  toXML(space?: number): string;
}

/** s3rver's model of a bucket's CORS configuration (lib/models/config.js). */
export interface S3rverCorsConfiguration {
  matchRule(origin: string, method: string): { hasWildcardOrigin: boolean; exposeHeaders: string[]; maxAgeSeconds?: number } | undefined;
}

/** The parts of s3rver's FilesystemStore (lib/stores/filesystem.js) the storage uses. */
export interface S3rverStore {
  readonly rootDirectory: string;
  /** Null when there is no such bucket. */
  getBucket(bucket: string): Promise<{ name: string; creationDate: Date } | null>;
  /** Removes the bucket with everything in it. */
  deleteBucket(bucket: string): Promise<unknown>;
  /** Every folder at the root. */
  listBuckets(): Promise<{ name: string }[]>;
  /** `<root>/<bucket>/<key's folders>/<key's name>._S3rver_<resource>` (s3rver-layout.ts) */
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  /**
   * What HeadObject shows of an object: `etag` (quoted), `last-modified` (HTTP date),
   * `content-length` and the stored headers (e.g. `x-amz-storage-class`). Rejects with ENOENT
   * when there is no such object.
   */
  getMetadata(bucket: string, key: string): Promise<Record<string, string | number | undefined>>;
  existsObject(bucket: string, key: string): Promise<boolean>;
  /** A bucket's CORS configuration (PutBucketCors, answered by s3rver), null when it has none. */
  getSubresource(bucket: string, key: undefined, resource: 'cors'): Promise<S3rverCorsConfiguration | null>;
  /** Writes an object's subresource document (its tags) beside it. */
  putSubresource(bucket: string, key: string, resource: S3rverSubresource): Promise<void>;
  deleteObject(bucket: string, key: string): Promise<unknown>;
  /** Called by s3rver's own CopyObject: copies the object's files, or writes new metadata when given. */
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: unknown): Promise<unknown>;
  /** Called by s3rver's own CreateMultipartUpload: the upload's folder with its `key` and `metadata` files. */
  initiateUpload(bucket: string, key: string, uploadId: string, metadata: unknown): Promise<void>;
}

type FilesystemStoreClass = new (directory: string) => S3rverStore;

const requireCjs = createRequire(import.meta.url);

function unlinkIfExists(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
}

/**
 * Removes an object's files (its content, ETag, metadata and tags) and the key's folders it
 * leaves empty; nothing for a key that holds no object. Synchronous, so that no other request
 * runs between a folder found empty and its removal: one placing an object there (which makes
 * the folder and moves its files in one synchronous step too) either finds the folder gone
 * and makes it again, or keeps it from being removed.
 */
export function removeObjectFiles(root: string, bucket: string, key: string): void {
  const files = objectFiles(root, bucket, key);
  for (const file of [files.content, files.md5, files.metadata, resourceFile(root, bucket, key, 'tagging.xml')]) unlinkIfExists(file);
  const bucketFolder = bucketDirectory(root, bucket);
  for (let folder = path.dirname(files.content); folder.startsWith(bucketFolder + path.sep); folder = path.dirname(folder)) {
    try {
      rmdirSync(folder);
    } catch {
      return;
    }
  }
}

/**
 * s3rver's store with the objstore's file names for keys (s3rver-layout.ts): every file s3rver
 * itself reads or writes for a key, in the operations the gateway still hands to it (CopyObject,
 * tagging, CreateMultipartUpload), is named by getResourcePath, which this replaces. Its
 * deleteObject took the key's segments for folder names when it removed the folders it emptied,
 * and raced requests in them; this one is removeObjectFiles. What it writes (with fs-extra's
 * modes, 0644 and 0755 under the usual umask) is made its user's alone, as the store's own
 * files are (0600, folders 0700), before the operation answers.
 */
export function createFilesystemStore(directory: string): S3rverStore {
  const FilesystemStore = requireCjs('s3rver/lib/stores/filesystem.js') as FilesystemStoreClass;
  /** Files 0600, and `folder` with each folder above it up to the bucket's 0700. */
  async function makePrivate(bucket: string, files: readonly string[], folder: string): Promise<void> {
    await Promise.all(files.map((file) => chmod(file, PRIVATE_FILE_MODE)));
    const root = bucketDirectory(directory, bucket);
    for (; folder.startsWith(root + path.sep); folder = path.dirname(folder)) await chmod(folder, PRIVATE_FOLDER_MODE);
  }

  class KeyMappingStore extends FilesystemStore {
    override getResourcePath(bucket: string, key: string | undefined, resource: string): string {
      return resourceFile(this.rootDirectory, bucket, key, resource);
    }

    override async deleteObject(bucket: string, key: string): Promise<void> {
      removeObjectFiles(this.rootDirectory, bucket, key);
    }

    override async copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: unknown): Promise<unknown> {
      const result = await super.copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata);
      const files = objectFiles(this.rootDirectory, destBucket, destKey);
      await makePrivate(destBucket, [files.content, files.md5, files.metadata], path.dirname(files.content));
      return result;
    }

    override async initiateUpload(bucket: string, key: string, uploadId: string, metadata: unknown): Promise<void> {
      await super.initiateUpload(bucket, key, uploadId, metadata);
      const upload = uploadDirectory(this.rootDirectory, bucket, uploadId);
      await makePrivate(bucket, [path.join(upload, 'key'), path.join(upload, 'metadata')], upload);
    }

    override async putSubresource(bucket: string, key: string, resource: S3rverSubresource): Promise<void> {
      await super.putSubresource(bucket, key, resource);
      await chmod(this.getResourcePath(bucket, key, `${resource.type}.xml`), PRIVATE_FILE_MODE);
    }
  }
  return new KeyMappingStore(directory);
}
