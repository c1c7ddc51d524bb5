/**
 * The objstore's storage in memory (`memory`): objects, uploads and their parts kept as the
 * buffers they arrived in, nothing written to disk, gone when the storage closes. Their bytes, and
 * those of bodies still arriving, stay within a budget: a body that would pass it is refused
 * with 507 InsufficientStorage as it arrives, before it is all read.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

import { errors, GatewayError } from '../s3-errors.ts';
import { treeProblem, objectsOf } from './tree.ts';
import { bucketsOf, treeOf } from './memory-tree.ts';
import {
  bucketBytes,
  emptyBucket,
  storedBytes,
  uploadBytes,
  type MemoryBucket,
  type MemoryBuckets,
  type MemoryObject,
  type MemoryUpload,
  type StoredContent,
} from './memory-state.ts';
import { objectMetadata } from './object-metadata.ts';
import type { ByteRange, IncomingContent, ObjectHead, ObjstoreStorage, UploadedPart } from './storage.ts';

export interface MemoryStorageOptions {
  /** The most bytes of content kept at once (objects, parts and bodies arriving), read at each write. */
  budgetBytes(): number;
}

/** The largest piece of content handed to a reader at once. */
const READ_PIECE_BYTES = 1024 * 1024;

function missingObject(bucket: string, key: string): Error {
  return Object.assign(new Error(`objstore: no object ${key} in bucket ${bucket}`), { code: 'ENOENT' });
}

/** The pieces of `content` within `range` (all of it for null), sliced without copying. */
function* piecesOf(content: StoredContent, range: ByteRange | null): Generator<Buffer> {
  const start = range?.start ?? 0;
  const end = Math.min(range === null ? content.size - 1 : range.end, content.size - 1);
  let offset = 0;
  for (const chunk of content.chunks) {
    const from = Math.max(start - offset, 0);
    const to = Math.min(end - offset + 1, chunk.length);
    for (let at = from; at < to; at += READ_PIECE_BYTES) yield chunk.subarray(at, Math.min(at + READ_PIECE_BYTES, to));
    offset += chunk.length;
    if (offset > end) return;
  }
}

/** The most bytes one block of copied pieces holds (a Buffer's length is bounded, a body's only by S3's 5 GiB). */
const BLOCK_BYTES = 64 * 1024 * 1024;
/** A piece this big that owns its memory is kept as it is: a socket read's, which Node allocates for it alone. */
const KEPT_PIECE_BYTES = 16 * 1024;

const ownsItsMemory = (piece: Buffer) =>
  piece.length >= KEPT_PIECE_BYTES && piece.byteOffset === 0 && piece.byteLength === piece.buffer.byteLength;

function copyOf(pieces: readonly Buffer[], size: number): Buffer {
  const block = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const piece of pieces) at += piece.copy(block, at);
  return block;
}

/**
 * The pieces of a body as stored: a piece that owns its memory as it is, the others copied into
 * blocks of their own, since they may be views of a bigger buffer (a decoded aws-chunked frame, a
 * socket read holding headers too) that they would keep alive, or slices of Node's shared pool.
 */
function blocksOf(pieces: readonly Buffer[]): Buffer[] {
  const blocks: Buffer[] = [];
  let run: Buffer[] = [];
  let runBytes = 0;
  const copyRun = () => {
    if (run.length > 0) blocks.push(copyOf(run, runBytes));
    run = [];
    runBytes = 0;
  };
  for (const piece of pieces) {
    if (ownsItsMemory(piece)) {
      copyRun();
      blocks.push(piece);
      continue;
    }
    if (runBytes + piece.length > BLOCK_BYTES) copyRun();
    run.push(piece);
    runBytes += piece.length;
  }
  copyRun();
  return blocks;
}

const readerOf = (content: StoredContent, range: ByteRange | null) =>
  Readable.from(piecesOf(content, range), { objectMode: false });

/**
 * Metadata as the files storage keeps it, in JSON: a header given without a value (a PutObject's dropped aws-chunked
 * Content-Encoding) is left out.
 */
const keptMetadata = (metadata: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== undefined));

/** The memory storage, empty. */
export function createMemoryStorage(options: MemoryStorageOptions): ObjstoreStorage {
  let buckets: MemoryBuckets = new Map();
  /** Bytes kept by `buckets`, and by bodies still arriving. */
  let stored = 0;
  let arriving = 0;

  /** InsufficientStorage unless `bytes` more fit in the budget beside what is stored and arriving. */
  const requireRoom = (bytes: number) => {
    const budget = options.budgetBytes();
    if (stored + arriving + bytes > budget) throw new GatewayError(errors.insufficientStorage(budget));
  };

  /** A body received into buffers, counted against the budget as it arrives. */
  class IncomingBuffers implements IncomingContent {
    private pieces: Buffer[] = [];
    size = 0;
    /** Once placed, its bytes count as stored. */
    placed = false;

    async write(data: readonly Buffer[]): Promise<void> {
      let bytes = 0;
      for (const piece of data) bytes += piece.length;
      requireRoom(bytes);
      this.pieces.push(...data);
      this.size += bytes;
      arriving += bytes;
    }

    async close(): Promise<void> {}

    async discard(): Promise<void> {
      if (this.placed) return;
      arriving -= this.size;
      this.pieces = [];
      this.size = 0;
    }

    /** Its content, now counted as stored. */
    take(): StoredContent {
      this.placed = true;
      arriving -= this.size;
      stored += this.size;
      return { chunks: blocksOf(this.pieces), size: this.size };
    }
  }

  const contentOf = (content: IncomingContent): IncomingBuffers => {
    if (!(content instanceof IncomingBuffers)) throw new TypeError('objstore: content received by another storage');
    return content;
  };
  const existingBucket = (name: string): MemoryBucket => {
    const bucket = buckets.get(name);
    if (bucket === undefined) throw new GatewayError(errors.noSuchBucket(name));
    return bucket;
  };
  const objectOf = (bucket: string, key: string) => buckets.get(bucket)?.objects.get(key);
  const uploadOf = (bucket: string, uploadId: string) => buckets.get(bucket)?.uploads.get(uploadId);
  const uploadInProgressOf = (bucket: string, uploadId: string) => {
    const upload = uploadOf(bucket, uploadId);
    return upload?.completed === null ? upload : undefined;
  };
  const setObject = (bucket: MemoryBucket, key: string, object: MemoryObject) => {
    stored -= bucket.objects.get(key)?.size ?? 0;
    bucket.objects.set(key, object);
  };
  const removeUpload = (bucket: MemoryBucket, uploadId: string) => {
    const upload = bucket.uploads.get(uploadId);
    if (upload === undefined) return;
    stored -= uploadBytes(upload);
    bucket.uploads.delete(uploadId);
  };
  const replaceBuckets = (next: MemoryBuckets) => {
    buckets = next;
    stored = storedBytes(next);
  };

  return {
    async bucketExists(bucket) {
      return buckets.has(bucket);
    },
    async ensureBuckets(names) {
      for (const name of names) if (!buckets.has(name)) buckets.set(name, emptyBucket(new Date()));
    },
    async reset(names) {
      const created = new Date();
      replaceBuckets(new Map(names.map((name) => [name, emptyBucket(created)])));
    },
    async createBucket(name) {
      if (!buckets.has(name)) buckets.set(name, emptyBucket(new Date()));
    },
    async deleteBucket(name) {
      const bucket = buckets.get(name);
      if (bucket === undefined) return;
      stored -= bucketBytes(bucket);
      buckets.delete(name);
    },
    async bucketNames() {
      return [...buckets.keys()];
    },
    async bucketCreationDate(bucket) {
      return buckets.get(bucket)?.created ?? null;
    },
    async hasObjects(bucket) {
      return (buckets.get(bucket)?.objects.size ?? 0) > 0;
    },
    async bucketCors(bucket) {
      return buckets.get(bucket)?.cors ?? null;
    },
    async setBucketCors(name, document) {
      const bucket = buckets.get(name);
      if (bucket !== undefined) bucket.cors = document;
    },

    async objectKeys(bucket, prefix) {
      return [...(buckets.get(bucket)?.objects.keys() ?? [])].filter((key) => key.startsWith(prefix));
    },
    async headObject(bucket, key) {
      const object = objectOf(bucket, key);
      if (object === undefined) return null;
      const head: ObjectHead = {
        ...object.metadata,
        etag: JSON.stringify(object.etag),
        'last-modified': object.lastModified.toUTCString(),
        'content-length': object.size,
      };
      return head;
    },
    async objectExists(bucket, key) {
      return objectOf(bucket, key) !== undefined;
    },
    async deleteObject(name, key) {
      const bucket = buckets.get(name);
      const object = bucket?.objects.get(key);
      if (object === undefined) return;
      stored -= object.size;
      bucket!.objects.delete(key);
    },
    storedMetadata: (_bucket, _key, headers) => objectMetadata(headers),
    async placeObject(name, key, content, etag, metadata, placing = (place) => place()) {
      const incoming = contentOf(content);
      try {
        await placing(async () => {
          setObject(existingBucket(name), key, {
            ...incoming.take(),
            etag,
            metadata: keptMetadata(metadata),
            tagging: null,
            lastModified: new Date(),
          });
        });
      } finally {
        await incoming.discard();
      }
    },
    async putObjectTagging(bucket, key, tagging) {
      const object = objectOf(bucket, key);
      if (object !== undefined) object.tagging = tagging;
    },
    async objectTagging(bucket, key) {
      return objectOf(bucket, key)?.tagging ?? null;
    },
    async openObject(bucket, key) {
      const object = objectOf(bucket, key);
      return object === undefined ? null : { size: object.size, content: readerOf(object, null) };
    },
    readObject(bucket, key, range) {
      const object = objectOf(bucket, key);
      if (object === undefined) {
        const missing = new Readable({ read() {} });
        process.nextTick(() => missing.destroy(missingObject(bucket, key)));
        return missing;
      }
      return readerOf(object, range);
    },

    async startUpload(name, key, headers) {
      const bucket = buckets.get(name);
      if (bucket === undefined) throw new Error(`objstore: no bucket ${name} to start an upload in`);
      const uploadId = randomBytes(16).toString('hex');
      bucket.uploads.set(uploadId, {
        key,
        createHeaders: { ...headers },
        initiated: new Date(),
        parts: new Map(),
        completed: null,
      });
      return uploadId;
    },
    async uploadKey(bucket, uploadId) {
      return uploadInProgressOf(bucket, uploadId)?.key ?? null;
    },
    async uploadInProgress(bucket, uploadId) {
      const upload = uploadInProgressOf(bucket, uploadId);
      return upload === undefined
        ? null
        : { key: upload.key, uploadId, initiated: upload.initiated, createHeaders: upload.createHeaders };
    },
    async uploadsInProgress(bucket) {
      return [...(buckets.get(bucket)?.uploads ?? [])].flatMap(([uploadId, upload]: [string, MemoryUpload]) =>
        upload.completed === null ? [{ key: upload.key, uploadId, initiated: upload.initiated }] : [],
      );
    },
    async uploadedParts(bucket, uploadId, { after = 0, limit = Infinity } = {}) {
      const upload = uploadInProgressOf(bucket, uploadId);
      if (upload === undefined) return [];
      const numbers = [...upload.parts.keys()].filter((number) => number > after).sort((a, b) => a - b);
      return numbers.slice(0, limit).map((number): UploadedPart => {
        const { md5, size, lastModified, checksum } = upload.parts.get(number)!;
        return { number, md5, size, lastModified, checksum };
      });
    },
    async placePart(bucket, uploadId, partNumber, content, md5, checksum) {
      const incoming = contentOf(content);
      try {
        const upload = uploadInProgressOf(bucket, uploadId);
        if (upload === undefined) throw new GatewayError(errors.noSuchUpload());
        stored -= upload.parts.get(partNumber)?.size ?? 0;
        upload.parts.set(partNumber, { ...incoming.take(), md5, checksum, lastModified: new Date() });
      } finally {
        await incoming.discard();
      }
    },
    async completeUpload(name, key, uploadId, partNumbers, completion, record, placing = (place) => place()) {
      const upload = uploadInProgressOf(name, uploadId);
      if (upload === undefined) throw new GatewayError(errors.noSuchUpload());
      const parts = partNumbers.map((number) => upload.parts.get(number)!);
      for (const part of parts) for (const chunk of part.chunks) completion.onContent(chunk);
      const metadata = { ...objectMetadata(upload.createHeaders), ...(await completion.metadata()) };
      const chunks = parts.flatMap((part) => part.chunks);
      const size = parts.reduce((total, part) => total + part.size, 0);
      await placing(async () => {
        const bucket = existingBucket(name);
        // The parts' bytes become the object's: counted once, as the object's.
        stored += size;
        setObject(bucket, key, {
          chunks,
          size,
          etag: completion.etag,
          metadata,
          tagging: null,
          lastModified: new Date(),
        });
      });
      const completed = await record();
      stored -= uploadBytes(upload);
      upload.parts = new Map();
      upload.completed = completed;
    },
    async completedUpload(bucket, uploadId) {
      return uploadOf(bucket, uploadId)?.completed ?? null;
    },
    async removeUpload(name, uploadId) {
      const bucket = buckets.get(name);
      if (bucket !== undefined) removeUpload(bucket, uploadId);
    },

    async receive(expectedBytes) {
      // Refused before a client waiting for 100 Continue sends the body.
      if (expectedBytes != null) requireRoom(expectedBytes);
      return new IncomingBuffers();
    },

    listBucketObjects(bucket) {
      return [...(buckets.get(bucket)?.objects ?? [])]
        .map(([key, object]) => ({ key, size: object.size }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    },
    readTree: () => treeOf(buckets),
    treeProblem,
    stageTree(entries, names) {
      const staged = bucketsOf(entries, names, new Date());
      const bytes = storedBytes(staged);
      const budget = options.budgetBytes();
      if (bytes > budget) {
        throw new Error(
          `its objects and upload parts take ${bytes} bytes, more than the memory storage keeps (${budget} bytes, ` +
            `objstore_memory_limit_mb)`,
        );
      }
      return { install: () => replaceBuckets(staged), discard: () => {} };
    },
    objectsOf,
  };
}
