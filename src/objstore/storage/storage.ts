/**
 * What the objstore's server needs from storage: every S3 operation reaches bytes and metadata
 * through it (test/objstore/storage-contract.test.ts holds the behaviours every implementation
 * must have), over two implementations: `files` (files-storage.ts), s3rver 3.7.1's layout on
 * disk, and `memory` (memory-storage.ts), within a byte budget.
 *
 * A snapshot holds the storage as the entries of the files layout (`readTree`, `stageTree`), whichever
 * storage wrote it, so a snapshot taken with one storage restores into the other.
 */
import type { Readable } from 'node:stream';

import type { ChecksumAlgorithm } from '../checksum-algorithms.ts';
import type { ObjstoreTreeEntry } from '../types.ts';

/**
 * What HeadObject shows of an object: `etag` (quoted), `last-modified` (HTTP date), `content-length` and the stored
 * headers.
 */
export type ObjectHead = Readonly<Record<string, string | number | undefined>>;

/** Runs the move that makes an object visible (`place`); it may throw instead of calling it. */
export type PlacementGuard = (place: () => Promise<void>) => Promise<void>;

/** What listing uploads in progress sorts and pages them by. */
export interface UploadSummary {
  key: string;
  uploadId: string;
  initiated: Date;
}

export interface UploadInProgress extends UploadSummary {
  /** The headers given at CreateMultipartUpload; null when unreadable. */
  createHeaders: Record<string, unknown> | null;
}

/**
 * Which of an upload's parts to read: those numbered above `after` (default 0), at most `limit` of them (default all).
 */
export interface PartRange {
  after?: number;
  limit?: number;
}

/** The checksum a part was uploaded with. */
export interface PartChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64, as in `x-amz-checksum-*`. */
  value: string;
}

export interface UploadedPart {
  number: number;
  /** Unquoted. */
  md5: string;
  size: number;
  lastModified: Date;
  checksum: PartChecksum | null;
}

/** What completing an upload stores besides the joined parts. */
export interface Completion {
  /** The object's ETag, unquoted. */
  etag: string;
  /** Sees the joined content as it is written (for a checksum of the whole object). */
  onContent(data: Buffer): void;
  /** Metadata kept beside that of the creation headers, asked for once the content is whole. */
  metadata(): Promise<Record<string, string>>;
}

/** An inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The bytes of a body being received (from `receive`), kept by the storage until `placeObject` or
 * `placePart` takes them, or `discard` drops them. Only the storage that made it takes it.
 */
export interface IncomingContent {
  /** Appends bytes; rejects with the S3 error to answer when the storage cannot keep them. */
  write(data: readonly Buffer[]): Promise<void>;
  /** No more bytes come. */
  close(): Promise<void>;
  /** Drops what was written (nothing once placed). */
  discard(): Promise<void>;
}

/** A storage's whole contents made ready beside it. */
export interface StagedTree {
  /** Puts them in the storage's place and drops what the storage held. */
  install(): void;
  /** Removes them (nothing once installed). */
  discard(): void;
}

export interface ObjstoreStorage {
  bucketExists(bucket: string): Promise<boolean>;
  /** Creates missing buckets; existing ones keep their contents. */
  ensureBuckets(buckets: readonly string[]): Promise<void>;
  /** Deletes every bucket and object, then recreates `buckets` empty. */
  reset(buckets: readonly string[]): Promise<void>;
  /** Creates an empty bucket (an existing one is left as it is). */
  createBucket(bucket: string): Promise<void>;
  /** Removes a bucket with everything in it, uploads in progress included. */
  deleteBucket(bucket: string): Promise<void>;
  /** Every bucket stored, in no particular order. */
  bucketNames(): Promise<string[]>;
  /** When the bucket was made on disk; null when there is no such bucket. */
  bucketCreationDate(bucket: string): Promise<Date | null>;
  /** Whether the bucket holds at least one object (uploads in progress are not objects). */
  hasObjects(bucket: string): Promise<boolean>;
  /**
   * The CORSConfiguration document kept for the bucket (PutBucketCors); null when it has none (or there is no such
   * bucket).
   */
  bucketCors(bucket: string): Promise<string | null>;
  /** Keeps a CORSConfiguration document for a bucket that exists, or removes the one it has (null). */
  setBucketCors(bucket: string, document: string | null): Promise<void>;

  /** The keys stored in the bucket that start with `prefix`, in no particular order. */
  objectKeys(bucket: string, prefix: string): Promise<string[]>;
  /** null when there is no such object. */
  headObject(bucket: string, key: string): Promise<ObjectHead | null>;
  objectExists(bucket: string, key: string): Promise<boolean>;
  deleteObject(bucket: string, key: string): Promise<void>;
  /**
   * The metadata kept for an object put with these request headers; an invalid one (e.g.
   * InvalidStorageClass) is thrown as the S3 error to answer.
   */
  storedMetadata(bucket: string, key: string, headers: Readonly<Record<string, unknown>>): Record<string, string>;
  /**
   * Puts `content` (closed) in place as the object, with its ETag (unquoted) and metadata; it
   * appears whole or not at all. `placing` runs the final step, so a caller can check the key
   * right before it (or refuse by throwing: the content is discarded either way).
   */
  placeObject(
    bucket: string,
    key: string,
    content: IncomingContent,
    etag: string,
    metadata: Readonly<Record<string, string>>,
    placing?: PlacementGuard,
  ): Promise<void>;
  /**
   * Replaces the tags of an object that exists with a Tagging document, kept as given (the caller checks it); nothing
   * when the object is gone.
   */
  putObjectTagging(bucket: string, key: string, tagging: string): Promise<void>;
  /** The Tagging document of an object's tags as kept; null when it has none (or there is no such object). */
  objectTagging(bucket: string, key: string): Promise<string | null>;
  /**
   * An object's whole content as it is now (one replaced meanwhile keeps the content opened); null when there is no
   * such object.
   */
  openObject(bucket: string, key: string): Promise<{ size: number; content: Readable } | null>;
  /**
   * An object's content, or the byte range of it; the stream fails with an error of code ENOENT when there is no such
   * object.
   */
  readObject(bucket: string, key: string, range: ByteRange | null): Readable;

  /**
   * Starts an upload of `key` in a bucket that exists, keeping the CreateMultipartUpload headers given; gives its new
   * id.
   */
  startUpload(bucket: string, key: string, headers: Readonly<Record<string, unknown>>): Promise<string>;
  /** The key an upload in progress was started for; null when there is no such upload. */
  uploadKey(bucket: string, uploadId: string): Promise<string | null>;
  /** An upload in progress; null when there is no such upload. */
  uploadInProgress(bucket: string, uploadId: string): Promise<UploadInProgress | null>;
  /** The bucket's uploads in progress, in no particular order. */
  uploadsInProgress(bucket: string): Promise<UploadSummary[]>;
  /**
   * The parts of an upload uploaded so far (those in `range`), by part number; a part still being written is not one
   * yet.
   */
  uploadedParts(bucket: string, uploadId: string, range?: PartRange): Promise<UploadedPart[]>;
  /** Puts `content` (closed) in place as a part, with its MD5 (unquoted) and the checksum it came with. */
  placePart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: IncomingContent,
    md5: string,
    checksum: PartChecksum | null,
  ): Promise<void>;
  /**
   * Completes an upload whose parts have been checked: the parts joined into the object, with
   * the completion's ETag and the metadata given when the upload was created beside its own;
   * then the upload is no longer in progress, only `record` of it is kept (`completedUpload`).
   */
  completeUpload(
    bucket: string,
    key: string,
    uploadId: string,
    partNumbers: readonly number[],
    completion: Completion,
    record: () => Promise<string>,
    placing?: PlacementGuard,
  ): Promise<void>;
  /** What `completeUpload` kept of a completed upload (until a reset); null for any other upload id. */
  completedUpload(bucket: string, uploadId: string): Promise<string | null>;
  removeUpload(bucket: string, uploadId: string): Promise<void>;

  /**
   * Somewhere to keep a body being received, of `expectedBytes` when the request says (a
   * Content-Length): the caller places it or discards it. Rejects with the S3 error to answer
   * when the storage cannot keep that many bytes, before any is read.
   */
  receive(expectedBytes?: number | null): Promise<IncomingContent>;

  /** The bucket's objects in key order, with their sizes (synchronous: for the state dump). */
  listBucketObjects(bucket: string): { key: string; size: number }[];
  /**
   * Every folder and file of the storage in the files layout, parents first, for snapshots; uploads still arriving are
   * left out.
   */
  readTree(): ObjstoreTreeEntry[];
  /**
   * What keeps entries from being the storage's contents with these buckets, in words; undefined when they are usable.
   */
  treeProblem(entries: readonly ObjstoreTreeEntry[], buckets: readonly string[]): string | undefined;
  /**
   * Readies entries read by readTree (that treeProblem found usable), with a bucket for each of `buckets`, to take the
   * storage's place.
   */
  stageTree(entries: readonly ObjstoreTreeEntry[], buckets: readonly string[]): StagedTree;
  /** The objects among readTree's entries. */
  objectsOf(entries: readonly ObjstoreTreeEntry[]): { bucket: string; key: string }[];
}

/** Receives everything `source` gives into new content of `storage`; the content is discarded if that fails. */
export async function receiveStream(storage: ObjstoreStorage, source: AsyncIterable<Buffer>): Promise<IncomingContent> {
  const content = await storage.receive();
  try {
    for await (const data of source) await content.write([data]);
    await content.close();
    return content;
  } catch (error) {
    await content.discard();
    throw error;
  }
}
