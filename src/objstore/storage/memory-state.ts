/** What the memory storage holds: buckets of objects, uploads and their parts, with the bytes they take. */
import type { PartChecksum } from './storage.ts';

/** Content as the chunks it was received in (an object completed from parts keeps one chunk per part). */
export interface StoredContent {
  chunks: readonly Buffer[];
  size: number;
}

export interface MemoryObject extends StoredContent {
  /** Unquoted. */
  etag: string;
  metadata: Readonly<Record<string, string>>;
  /** Its Tagging document; null when it has no tags. */
  tagging: string | null;
  lastModified: Date;
}

export interface MemoryPart extends StoredContent {
  /** Unquoted. */
  md5: string;
  checksum: PartChecksum | null;
  lastModified: Date;
}

export interface MemoryUpload {
  key: string;
  createHeaders: Record<string, unknown>;
  initiated: Date;
  parts: Map<number, MemoryPart>;
  /** What completing it kept; null while it is in progress. */
  completed: string | null;
}

export interface MemoryBucket {
  created: Date;
  objects: Map<string, MemoryObject>;
  uploads: Map<string, MemoryUpload>;
  /** Its CORSConfiguration document; null when it has none. */
  cors: string | null;
}

export type MemoryBuckets = Map<string, MemoryBucket>;

export function emptyBucket(created: Date): MemoryBucket {
  return { created, objects: new Map(), uploads: new Map(), cors: null };
}

/** The bytes of content a bucket keeps: its objects' and its uploads' parts. */
export function bucketBytes(bucket: MemoryBucket): number {
  let bytes = 0;
  for (const object of bucket.objects.values()) bytes += object.size;
  for (const upload of bucket.uploads.values()) bytes += uploadBytes(upload);
  return bytes;
}

export function uploadBytes(upload: MemoryUpload): number {
  let bytes = 0;
  for (const part of upload.parts.values()) bytes += part.size;
  return bytes;
}

export function storedBytes(buckets: MemoryBuckets): number {
  let bytes = 0;
  for (const bucket of buckets.values()) bytes += bucketBytes(bucket);
  return bytes;
}
