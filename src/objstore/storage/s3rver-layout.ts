/**
 * s3rver 3.7.1's on-disk layout (lib/stores/filesystem.js), and the objstore's own temporary
 * files beside it. The only module that knows a file suffix, a sidecar name or where uploads in
 * progress live; everything else asks it.
 *
 * - An object is `<bucket>/<key dirs>/<last key part>._S3rver_object`, beside the sidecars
 *   `._S3rver_object.md5` (its unquoted ETag) and `._S3rver_metadata.json` (its stored headers).
 * - An upload in progress is `<bucket>/._S3rver_uploads/<uploadId>/`: a `key` file (the key it was
 *   started for), a `metadata` file (the CreateMultipartUpload headers, as JSON), and per part
 *   `<partNumber>` with its MD5 in `<partNumber>.md5` and the checksum it came with (JSON, or
 *   `null`) in `<partNumber>.checksum`, written once the part is whole. A completed upload keeps
 *   only a `completed` file there (no `key`: it is no longer in progress).
 * - An upload still arriving is a `.incoming-<uuid>` file in the root, which s3rver never takes
 *   for a bucket (only directories are), on the same filesystem as the objects so a rename puts
 *   it in place.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';

import { PRIVATE_FOLDER_MODE } from '../../shared/private-files.ts';
import type { S3rverStore } from './s3rver-store.ts';

const OBJECT_SUFFIX = '._S3rver_object';
const UPLOADS_DIRECTORY = '._S3rver_uploads';
const INCOMING_PREFIX = '.incoming-';
const PART_FILE = /^\d+$/;

/** The files of one object: its content and its two sidecars. */
export interface ObjectFiles {
  content: string;
  md5: string;
  metadata: string;
}

/** A bucket is the folder `<root>/<bucket>`, its user's alone (s3rver's own CreateBucket would make it 0755). */
export function bucketDirectory(root: string, bucket: string): string {
  return path.join(root, bucket);
}
export const BUCKET_MODE = PRIVATE_FOLDER_MODE;

export function objectFiles(store: S3rverStore, bucket: string, key: string): ObjectFiles {
  return {
    content: store.getResourcePath(bucket, key, 'object'),
    md5: store.getResourcePath(bucket, key, 'object.md5'),
    metadata: store.getResourcePath(bucket, key, 'metadata.json'),
  };
}

/** The key whose content file this is (a path relative to its bucket), or null for any other file. */
export function keyOfObjectFile(relativePath: string): string | null {
  return relativePath.endsWith(OBJECT_SUFFIX) ? relativePath.slice(0, -OBJECT_SUFFIX.length) : null;
}

/** Whether a bucket's top-level folder of this name holds uploads in progress rather than objects. */
export function isUploadsFolder(name: string): boolean {
  return name === UPLOADS_DIRECTORY;
}

export function uploadsDirectory(store: S3rverStore, bucket: string): string {
  return store.getResourcePath(bucket, undefined, 'uploads');
}

export function uploadDirectory(store: S3rverStore, bucket: string, uploadId: string): string {
  return path.join(uploadsDirectory(store, bucket), uploadId);
}

/** The files of an upload in progress that describe it. */
export function uploadFiles(directory: string): { key: string; createHeaders: string; completed: string } {
  return { key: path.join(directory, 'key'), createHeaders: path.join(directory, 'metadata'), completed: path.join(directory, 'completed') };
}

export function partFiles(uploadDirectory: string, partNumber: number): { content: string; md5: string; checksum: string } {
  const content = path.join(uploadDirectory, String(partNumber));
  return { content, md5: `${content}.md5`, checksum: `${content}.checksum` };
}

/** The part number whose content file this is (a name in an upload's directory), or null. */
export function partNumberOfFile(name: string): number | null {
  return PART_FILE.test(name) ? Number(name) : null;
}

/** A new temporary file beside the store. */
export function incomingFile(root: string): string {
  return path.join(root, `${INCOMING_PREFIX}${randomUUID()}`);
}

/** Whether a file in the store's root is an upload still arriving (or abandoned by a killed process). */
export function isIncomingFile(name: string): boolean {
  return name.startsWith(INCOMING_PREFIX);
}
