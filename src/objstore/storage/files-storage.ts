/**
 * The objstore's storage in files (`files`): each object is its content file beside its ETag and
 * metadata files, each upload in progress a folder of its parts, in s3rver 3.7.1's layout
 * (files-layout.ts), written and read as s3rver's FilesystemStore did, so that every data dir and
 * snapshot written so far reads the same (test/objstore/1182b23-data.test.ts). The objects are
 * plain files, which the plain-file view links.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import {
  chmodSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, open, readdir, readFile, rm, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

import { ConcurrencyLimit } from '../../shared/concurrency-limit.ts';
import { mapInSlices } from '../../shared/sliced.ts';

import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE, resetToEmptyFolders } from '../../shared/private-files.ts';
import { objectMetadata } from './object-metadata.ts';
import {
  BUCKET_MODE,
  bucketCorsFile,
  bucketDirectory,
  followStoredName,
  incomingFile,
  isIncomingFile,
  isKeyFolder,
  nameOfObjectFile,
  objectFiles,
  type ObjectFiles,
  partFiles,
  partNumberOfFile,
  uploadDirectory,
  uploadFiles,
  uploadsDirectory,
} from './files-layout.ts';
import type {
  IncomingContent,
  ObjectHead,
  ObjstoreStorage,
  PartChecksum,
  PlacementGuard,
  UploadedPart,
  UploadInProgress,
  UploadSummary,
} from './storage.ts';
import { listBucketObjects, objectsOf, openTree, readTree, stageTree, treeProblem } from './tree.ts';

function isMissingFile(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function orNullWhenMissing<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
}

const readOptional = (file: string): Promise<string | null> => orNullWhenMissing(readFile(file, 'utf8'));

async function readDirectory(directory: string): Promise<Dirent[]> {
  return (await orNullWhenMissing(readdir(directory, { withFileTypes: true }))) ?? [];
}

async function readDirectoryNames(directory: string): Promise<string[]> {
  return (await orNullWhenMissing(readdir(directory))) ?? [];
}

/**
 * Removes the temporary files of uploads that a killed process left unfinished (and a folder by such a name, which the
 * storage never makes).
 */
function removeAbandonedIncoming(root: string): void {
  for (const name of readdirSync(root)) {
    if (isIncomingFile(name)) rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

/**
 * Adds to `keys` the keys stored under `folder` (`keySoFar` the key its names give, null for the
 * bucket folder itself) that start with `prefix`. A folder's keys all start with its own.
 */
async function collectKeys(folder: string, keySoFar: string | null, prefix: string, keys: string[]): Promise<void> {
  const entries = await readDirectory(folder);
  await Promise.all(
    entries.map(async (entry) => {
      if (entry.isDirectory()) {
        const folderKey = isKeyFolder(entry.name) ? followStoredName(keySoFar, entry.name) : null;
        if (folderKey !== null && (folderKey.startsWith(prefix) || prefix.startsWith(folderKey))) {
          await collectKeys(path.join(folder, entry.name), folderKey, prefix, keys);
        }
      } else if (entry.isFile()) {
        const name = nameOfObjectFile(entry.name);
        const key = name === null ? null : followStoredName(keySoFar, name);
        if (key && key.startsWith(prefix)) keys.push(key);
      }
    }),
  );
}

/** Whether `folder` (a bucket's, or one of its key folders) holds an object, at any depth. */
async function holdsObject(folder: string): Promise<boolean> {
  const entries = await readDirectory(folder);
  if (entries.some((entry) => entry.isFile() && nameOfObjectFile(entry.name) !== null)) return true;
  for (const entry of entries) {
    if (entry.isDirectory() && isKeyFolder(entry.name) && (await holdsObject(path.join(folder, entry.name))))
      return true;
  }
  return false;
}

/** A synchronous read's result; null when its file is missing. */
function orNullWhenMissingSync<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
}

/**
 * The small files describing thousands of uploads or parts are read synchronously, one
 * descriptor at a time, this many per turn of the event loop (a few milliseconds): several
 * times faster than as many asynchronous reads, and requests arriving meanwhile wait at most
 * one slice and always find descriptors left.
 */
const SYNC_READS_PER_SLICE = 256;

/** How many asynchronous file operations of one fan-out (object heads of a listing, removals) run at once. */
const FILE_OPERATIONS_AT_ONCE = 16;

/** null for a directory that is not (or no longer) a whole upload. */
function summarizeUpload(directory: string, uploadId: string): UploadSummary | null {
  const file = uploadFiles(directory).key;
  const key = orNullWhenMissingSync(() => readFileSync(file, 'utf8'));
  const stats = orNullWhenMissingSync(() => statSync(file));
  return key === null || stats === null ? null : { key, uploadId, initiated: stats.mtime };
}

/** null for a directory that is not (or no longer) a whole upload. */
function describeUpload(directory: string, uploadId: string): UploadInProgress | null {
  const summary = summarizeUpload(directory, uploadId);
  if (summary === null) return null;
  return {
    ...summary,
    createHeaders: parseHeaders(
      orNullWhenMissingSync(() => readFileSync(uploadFiles(directory).createHeaders, 'utf8')),
    ),
  };
}

/** null for a part that is not (or no longer) whole. */
function readPart(upload: string, number: number): UploadedPart | null {
  const files = partFiles(upload, number);
  const md5 = orNullWhenMissingSync(() => readFileSync(files.md5, 'utf8'));
  const stats = orNullWhenMissingSync(() => statSync(files.content));
  const checksum = orNullWhenMissingSync(() => readFileSync(files.checksum, 'utf8'));
  if (md5 === null || stats === null) return null;
  return {
    number,
    md5: md5.trim(),
    size: stats.size,
    lastModified: stats.mtime,
    checksum: JSON.parse(checksum ?? 'null') as PartChecksum | null,
  };
}

/** Appends each file's content to `destination` in turn, one descriptor open for reading at a time. */
async function concatenate(
  sources: readonly string[],
  destination: string,
  onContent: (data: Buffer) => void,
): Promise<void> {
  const output = await open(destination, 'w');
  try {
    for (const source of sources) {
      for await (const data of createReadStream(source)) {
        onContent(data as Buffer);
        await output.write(data as Buffer);
      }
    }
  } finally {
    await output.close();
  }
}

/** The MD5 of a file's content, in hex. */
async function md5Of(file: string): Promise<string> {
  const hash = createHash('md5');
  for await (const data of createReadStream(file)) hash.update(data as Buffer);
  return hash.digest('hex');
}

/**
 * What HeadObject shows of the object of these files (rejects with ENOENT when there is none):
 * the headers kept in its metadata file, then `etag` (its MD5 file's, quoted), `last-modified`
 * (its content's mtime) and `content-length` (its size). An object without an MD5 file (a storage
 * s3rver's CopyObject wrote) gets one, of its content.
 */
async function readHead(files: ObjectFiles): Promise<ObjectHead> {
  const stats = await stat(files.content);
  if (!stats.isFile()) throw Object.assign(new Error(`${files.content} is no object`), { code: 'ENOENT' });
  const [metadata, md5] = await Promise.all([readOptional(files.metadata), readOptional(files.md5)]);
  return {
    ...(metadata === null ? {} : (JSON.parse(metadata) as Record<string, string>)),
    etag: JSON.stringify(md5 ?? (await writeMissingMd5(files))),
    'last-modified': stats.mtime.toUTCString(),
    'content-length': stats.size,
  };
}

/** Writes the MD5 file an object lacks, unless one has been placed meanwhile; gives the MD5. */
async function writeMissingMd5(files: ObjectFiles): Promise<string> {
  const md5 = await md5Of(files.content);
  try {
    await writeFile(files.md5, md5, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return md5;
}

function parseHeaders(json: string | null): Record<string, unknown> | null {
  try {
    return JSON.parse(json ?? '{}') as Record<string, unknown>;
  } catch {
    return null;
  }
}

function unlinkIfExists(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if (!isMissingFile(err)) throw err;
  }
}

/**
 * Removes an object's files (its content, ETag, metadata and tags) and the key's folders it
 * leaves empty; nothing for a key that holds no object. Synchronous, so that no other request
 * runs between a folder found empty and its removal: one placing an object there (which makes
 * the folder and moves its files in one synchronous step too) either finds the folder gone
 * and makes it again, or keeps it from being removed.
 */
function removeObjectFiles(root: string, bucket: string, key: string): void {
  const files = objectFiles(root, bucket, key);
  for (const file of [files.content, files.md5, files.metadata, files.tagging]) unlinkIfExists(file);
  const bucketFolder = bucketDirectory(root, bucket);
  for (
    let folder = path.dirname(files.content);
    folder.startsWith(bucketFolder + path.sep);
    folder = path.dirname(folder)
  ) {
    try {
      rmdirSync(folder);
    } catch {
      return;
    }
  }
}

/** A body received into a temporary file beside the storage, which placing renames into place. */
class IncomingFile implements IncomingContent {
  constructor(
    readonly file: string,
    private handle: FileHandle | null = null,
  ) {}

  static async create(root: string): Promise<IncomingFile> {
    const file = incomingFile(root);
    return new IncomingFile(file, await open(file, 'wx'));
  }

  async write(data: readonly Buffer[]): Promise<void> {
    if (data.length === 1) await this.handle!.write(data[0]!);
    else if (data.length > 1) await this.handle!.writev(data as Buffer[]);
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }

  async discard(): Promise<void> {
    await this.close();
    await rm(this.file, { force: true });
  }
}

/** The file of content this storage received, closed. */
async function closedFileOf(content: IncomingContent): Promise<string> {
  if (!(content instanceof IncomingFile)) throw new TypeError('objstore: content received by another storage');
  await content.close();
  return content.file;
}

/** The files storage, and where an object's content is, for the plain-file view to link. */
export interface FileStorage extends ObjstoreStorage {
  /** The file holding an object's content (it may not exist). */
  objectContentFile(bucket: string, key: string): string;
}

/**
 * The files storage in `directory` (made 0700 if need be; what a crash left of a restore or an upload is settled
 * first).
 */
export function createFileStorage(directory: string): FileStorage {
  openTree(directory);
  removeAbandonedIncoming(directory);
  const fileOperations = new ConcurrencyLimit(FILE_OPERATIONS_AT_ONCE);
  const makeBucket = (bucket: string) =>
    mkdir(bucketDirectory(directory, bucket), { recursive: true, mode: BUCKET_MODE });

  /**
   * Removes the sidecar files whose contents are null, renames each other sidecar (path ->
   * contents) into place, then `file` to `destination`: the sidecars are written beside the
   * storage first so no reader sees a half-written one, and the body comes last, so a new object
   * appears whole with its ETag and metadata even if the process dies in between. Nothing is
   * moved unless every file is ready; whatever was not moved is removed. The removals and the
   * moves run inside `placing`.
   *
   * Synchronous but for `placing`: a few tiny file operations, each faster than a round trip
   * through libuv's pool (the storage's hottest path: every PutObject and UploadPart).
   */
  async function placeWithSidecars(
    file: string,
    destination: string,
    sidecars: Record<string, string | null>,
    placing: PlacementGuard = (place) => place(),
  ): Promise<void> {
    const files: { from: string; to: string }[] = [];
    const stale = Object.keys(sidecars).filter((to) => sidecars[to] === null);
    const moved = new Set<string>();
    try {
      for (const [to, contents] of Object.entries(sidecars)) {
        if (contents === null) continue;
        const staged = incomingFile(directory);
        files.push({ from: staged, to });
        writeFileSync(staged, contents, { mode: PRIVATE_FILE_MODE });
      }
      // Whoever wrote the body, and with whatever umask: what the storage holds is its user's alone.
      chmodSync(file, PRIVATE_FILE_MODE);
      files.push({ from: file, to: destination });
      await placing(async () => {
        // With the moves, in one synchronous step: a delete emptying the folder meanwhile cannot remove it under them.
        mkdirSync(path.dirname(destination), { recursive: true, mode: PRIVATE_FOLDER_MODE });
        for (const to of stale) rmSync(to, { force: true });
        for (const { from, to } of files) {
          renameSync(from, to);
          moved.add(from);
        }
      });
    } finally {
      for (const from of new Set([file, ...files.map(({ from }) => from)]))
        if (!moved.has(from)) rmSync(from, { force: true });
    }
  }

  /**
   * Writes `contents` beside the storage and renames it to `destination` (readers see the file
   * before or after, never part of it), if `stillWanted` (asked right before the rename).
   */
  function placeFile(destination: string, contents: string, stillWanted: () => boolean = () => true): void {
    const staged = incomingFile(directory);
    try {
      writeFileSync(staged, contents, { mode: PRIVATE_FILE_MODE });
      if (stillWanted()) renameSync(staged, destination);
    } finally {
      rmSync(staged, { force: true });
    }
  }

  const storage: FileStorage = {
    async bucketExists(bucket) {
      return orNullWhenMissingSync(() => statSync(bucketDirectory(directory, bucket)))?.isDirectory() ?? false;
    },
    async ensureBuckets(buckets) {
      for (const bucket of buckets) await makeBucket(bucket);
    },
    // Synchronous: a handful of tiny file operations, done faster than one round trip through libuv's pool.
    async reset(buckets) {
      resetToEmptyFolders(directory, buckets);
    },
    async createBucket(bucket) {
      await makeBucket(bucket);
    },
    async deleteBucket(bucket) {
      await rm(bucketDirectory(directory, bucket), { recursive: true, force: true });
    },
    async bucketNames() {
      return (await readDirectory(directory)).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    },
    async bucketCreationDate(bucket) {
      const stats = await orNullWhenMissing(stat(bucketDirectory(directory, bucket)));
      return stats?.isDirectory() ? stats.birthtime : null;
    },
    async hasObjects(bucket) {
      return holdsObject(bucketDirectory(directory, bucket));
    },
    bucketCors: (bucket) => readOptional(bucketCorsFile(directory, bucket)),
    async setBucketCors(bucket, document) {
      const file = bucketCorsFile(directory, bucket);
      if (document === null) rmSync(file, { force: true });
      else placeFile(file, document, () => existsSync(bucketDirectory(directory, bucket)));
    },

    async objectKeys(bucket, prefix) {
      const keys: string[] = [];
      await collectKeys(bucketDirectory(directory, bucket), null, prefix, keys);
      return keys;
    },
    headObject: (bucket, key) =>
      fileOperations.run(() => orNullWhenMissing(readHead(objectFiles(directory, bucket, key)))),
    async objectExists(bucket, key) {
      return (await orNullWhenMissing(stat(objectFiles(directory, bucket, key).content)))?.isFile() ?? false;
    },
    async deleteObject(bucket, key) {
      removeObjectFiles(directory, bucket, key);
    },
    storedMetadata: (_bucket, _key, headers) => objectMetadata(headers),
    async placeObject(bucket, key, content, etag, metadata, placing) {
      const files = objectFiles(directory, bucket, key);
      await placeWithSidecars(
        await closedFileOf(content),
        files.content,
        {
          [files.md5]: etag,
          [files.metadata]: JSON.stringify(metadata, null, 2),
          // A new object under the key starts without the old one's tags, as on S3.
          [files.tagging]: null,
        },
        placing,
      );
    },
    async putObjectTagging(bucket, key, tagging) {
      const files = objectFiles(directory, bucket, key);
      // Only beside an object that is still there (a delete, synchronous, cannot come in between).
      placeFile(files.tagging, tagging, () => statSync(files.content, { throwIfNoEntry: false })?.isFile() ?? false);
    },
    objectTagging: (bucket, key) => readOptional(objectFiles(directory, bucket, key).tagging),
    objectContentFile: (bucket, key) => objectFiles(directory, bucket, key).content,
    async openObject(bucket, key) {
      const handle = await orNullWhenMissing(open(objectFiles(directory, bucket, key).content, 'r'));
      if (handle === null) return null;
      try {
        const stats = await handle.stat();
        if (stats.isFile()) return { size: stats.size, content: handle.createReadStream() };
      } catch (error) {
        await handle.close();
        throw error;
      }
      await handle.close();
      return null;
    },
    readObject: (bucket, key, range) => createReadStream(objectFiles(directory, bucket, key).content, range ?? {}),

    async startUpload(bucket, key, headers) {
      const uploadId = randomBytes(16).toString('hex');
      const upload = uploadDirectory(directory, bucket, uploadId);
      const files = uploadFiles(upload);
      // A bucket a delete took meanwhile is not made again.
      if (!existsSync(bucketDirectory(directory, bucket)))
        throw new Error(`objstore: no bucket ${bucket} to start an upload in`);
      mkdirSync(upload, { recursive: true, mode: PRIVATE_FOLDER_MODE });
      // The headers first: an upload is in progress once its key is there, written whole.
      writeFileSync(files.createHeaders, JSON.stringify(headers), { mode: PRIVATE_FILE_MODE });
      placeFile(files.key, key);
      return uploadId;
    },
    async uploadKey(bucket, uploadId) {
      return orNullWhenMissingSync(() =>
        readFileSync(uploadFiles(uploadDirectory(directory, bucket, uploadId)).key, 'utf8'),
      );
    },
    async uploadInProgress(bucket, uploadId) {
      return describeUpload(uploadDirectory(directory, bucket, uploadId), uploadId);
    },
    async uploadsInProgress(bucket) {
      const root = uploadsDirectory(directory, bucket);
      const uploads = await mapInSlices(await readDirectoryNames(root), SYNC_READS_PER_SLICE, (uploadId) =>
        summarizeUpload(path.join(root, uploadId), uploadId),
      );
      return uploads.filter((upload) => upload !== null);
    },
    async uploadedParts(bucket, uploadId, { after = 0, limit = Infinity } = {}) {
      const upload = uploadDirectory(directory, bucket, uploadId);
      const numbers = (await readDirectoryNames(upload))
        .map(partNumberOfFile)
        .filter((number): number is number => number !== null && number > after)
        .sort((a, b) => a - b);
      const parts: UploadedPart[] = [];
      // A part removed meanwhile drops out, and the next one takes its place.
      for (let rest = numbers; rest.length > 0 && parts.length < limit;) {
        const batch = rest.slice(0, limit - parts.length);
        rest = rest.slice(batch.length);
        for (const part of await mapInSlices(batch, SYNC_READS_PER_SLICE, (number) => readPart(upload, number)))
          if (part !== null) parts.push(part);
      }
      return parts;
    },
    async placePart(bucket, uploadId, partNumber, content, md5, checksum) {
      const files = partFiles(uploadDirectory(directory, bucket, uploadId), partNumber);
      // A part uploaded again without a checksum loses the one it had.
      await placeWithSidecars(await closedFileOf(content), files.content, {
        [files.md5]: md5,
        [files.checksum]: checksum && JSON.stringify(checksum),
      });
    },
    async completeUpload(bucket, key, uploadId, partNumbers, completion, record, placing) {
      const upload = uploadDirectory(directory, bucket, uploadId);
      const files = uploadFiles(upload);
      const createHeaders = JSON.parse(await readFile(files.createHeaders, 'utf8')) as Record<string, unknown>;
      const metadata = objectMetadata(createHeaders);
      const file = incomingFile(directory);
      let completionMetadata: Record<string, string>;
      try {
        await concatenate(
          partNumbers.map((number) => partFiles(upload, number).content),
          file,
          (data) => completion.onContent(data),
        );
        completionMetadata = await completion.metadata();
      } catch (error) {
        await rm(file, { force: true });
        throw error;
      }
      await storage.placeObject(
        bucket,
        key,
        new IncomingFile(file),
        completion.etag,
        { ...metadata, ...completionMetadata },
        placing,
      );
      // The record first, then the key (the upload is no longer in progress), then the parts.
      await writeFile(files.completed, await record(), { mode: PRIVATE_FILE_MODE });
      await rm(files.key, { force: true });
      const leftovers = (await readDirectoryNames(upload)).filter(
        (name) => path.join(upload, name) !== files.completed,
      );
      await fileOperations.map(leftovers, (name) => orNullWhenMissing(unlink(path.join(upload, name))));
    },
    completedUpload: (bucket, uploadId) =>
      readOptional(uploadFiles(uploadDirectory(directory, bucket, uploadId)).completed),
    async removeUpload(bucket, uploadId) {
      await rm(uploadDirectory(directory, bucket, uploadId), { recursive: true, force: true });
    },

    receive: () => IncomingFile.create(directory),

    listBucketObjects: (bucket) => listBucketObjects(directory, bucket),
    readTree: () => readTree(directory),
    treeProblem,
    stageTree: (entries, buckets) => stageTree(directory, entries, buckets),
    objectsOf,
  };
  return storage;
}
