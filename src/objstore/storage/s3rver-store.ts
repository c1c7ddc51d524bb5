/** s3rver's FilesystemStore, described by the minimal interface the storage uses (s3rver has no type declarations). */
import { createRequire } from 'node:module';

/** One of s3rver's subresource documents (an object's tags), as its store writes them. */
export interface S3rverSubresource {
  type: string;
  toXML(space?: number): string;
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
  /** Objects in key order, at most `maxKeys` of them (it stops reading there). */
  listObjects(bucket: string, options: { maxKeys: number }): Promise<{ objects: unknown[] }>;
  /** `<root>/<bucket>/<key dirs>/<last key part>._S3rver_<resource>` */
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  /**
   * What HeadObject shows of an object: `etag` (quoted), `last-modified` (HTTP date),
   * `content-length` and the stored headers (e.g. `x-amz-storage-class`). Rejects with ENOENT
   * when there is no such object.
   */
  getMetadata(bucket: string, key: string): Promise<Record<string, string | number | undefined>>;
  existsObject(bucket: string, key: string): Promise<boolean>;
  /** Writes an object's subresource document (its tags) beside it. */
  putSubresource(bucket: string, key: string, resource: S3rverSubresource): Promise<void>;
  deleteObject(bucket: string, key: string): Promise<unknown>;
}

const requireCjs = createRequire(import.meta.url);

export function createFilesystemStore(directory: string): S3rverStore {
  const FilesystemStore = requireCjs('s3rver/lib/stores/filesystem.js') as new (directory: string) => S3rverStore;
  return new FilesystemStore(directory);
}
