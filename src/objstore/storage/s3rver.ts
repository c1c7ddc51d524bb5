/** The objstore's storage on s3rver's filesystem store: s3rver's own layout, written and read as s3rver does. */
import type { Dirent, Stats } from 'node:fs';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE } from '../../shared/private-files.ts';
import { createS3rverHandler, objectMetadata, taggingSubresource } from './s3rver-app.ts';
import {
  BUCKET_MODE,
  bucketDirectory,
  incomingFile,
  isIncomingFile,
  isUploadsFolder,
  keyOfObjectFile,
  objectFiles,
  partFiles,
  partNumberOfFile,
  uploadDirectory,
  uploadFiles,
  uploadsDirectory,
} from './s3rver-layout.ts';
import { createFilesystemStore, type S3rverStore } from './s3rver-store.ts';
import type { ObjstoreStorage, PartChecksum, PlacementGuard, UploadedPart, UploadInProgress } from './storage.ts';
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
const statOptional = (file: string): Promise<Stats | null> => orNullWhenMissing(stat(file));

async function readDirectory(directory: string): Promise<Dirent[]> {
  return (await orNullWhenMissing(readdir(directory, { withFileTypes: true }))) ?? [];
}

async function readDirectoryNames(directory: string): Promise<string[]> {
  return (await orNullWhenMissing(readdir(directory))) ?? [];
}

/** Removes the temporary files of uploads that a killed process left unfinished (and a folder by such a name, which the store never makes). */
function removeAbandonedIncoming(root: string): void {
  for (const name of readdirSync(root)) {
    if (isIncomingFile(name)) rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

/** Adds to `keys` the keys stored under `directory` (whose keys start with `keyPrefix`) that start with `prefix`. */
async function collectKeys(directory: string, keyPrefix: string, prefix: string, keys: string[]): Promise<void> {
  const entries = await readDirectory(directory);
  await Promise.all(
    entries.map(async (entry) => {
      if (entry.isDirectory()) {
        if (keyPrefix === '' && isUploadsFolder(entry.name)) return;
        const nestedPrefix = `${keyPrefix}${entry.name}/`;
        if (nestedPrefix.startsWith(prefix) || prefix.startsWith(nestedPrefix)) {
          await collectKeys(path.join(directory, entry.name), nestedPrefix, prefix, keys);
        }
      } else if (entry.isFile()) {
        const name = keyOfObjectFile(entry.name);
        if (name !== null && (keyPrefix + name).startsWith(prefix)) keys.push(keyPrefix + name);
      }
    }),
  );
}

/** null for a directory that is not (or no longer) a whole upload. */
async function describeUpload(directory: string, uploadId: string): Promise<UploadInProgress | null> {
  const files = uploadFiles(directory);
  const [key, keyStats, createHeaders] = await Promise.all([readOptional(files.key), statOptional(files.key), readOptional(files.createHeaders)]);
  if (key === null || keyStats === null) return null;
  return { key, uploadId, initiated: keyStats.mtime, createHeaders: parseHeaders(createHeaders) };
}

function parseHeaders(json: string | null): Record<string, unknown> | null {
  try {
    return JSON.parse(json ?? '{}') as Record<string, unknown>;
  } catch {
    return null;
  }
}

export function createS3rverStorage(directory: string): ObjstoreStorage {
  openTree(directory);
  removeAbandonedIncoming(directory);
  // s3rver's store (fs-extra and lodash with it) is loaded on first use: a start only needs the
  // bucket folders, made here.
  let loadedStore: S3rverStore | null = null;
  const store = () => (loadedStore ??= createFilesystemStore(directory));
  const s3rver = createS3rverHandler(store);
  const makeBucket = (bucket: string) => mkdir(bucketDirectory(directory, bucket), { recursive: true, mode: BUCKET_MODE });

  /**
   * Renames each sidecar file (path -> contents) into place, then `file` to `destination`: the
   * sidecars are written beside the store first so no reader sees a half-written one, and the
   * body comes last, so a new object appears whole with its ETag and metadata even if the
   * process dies in between. Nothing is moved unless every file is ready; whatever was not moved
   * is removed. The final moves run inside `placing`.
   */
  async function placeWithSidecars(
    file: string,
    destination: string,
    sidecars: Record<string, string>,
    placing: PlacementGuard = (place) => place(),
  ): Promise<void> {
    const files: { from: string; to: string }[] = [];
    try {
      for (const [to, contents] of Object.entries(sidecars)) {
        const staged = incomingFile(directory);
        await writeFile(staged, contents, { mode: PRIVATE_FILE_MODE });
        files.push({ from: staged, to });
      }
      // Whoever wrote the body, and with whatever umask: what the store holds is its user's alone.
      await chmod(file, PRIVATE_FILE_MODE);
      files.push({ from: file, to: destination });
      await mkdir(path.dirname(destination), { recursive: true, mode: PRIVATE_FOLDER_MODE });
      await placing(async () => {
        for (const { from, to } of files) await rename(from, to);
      });
    } finally {
      await Promise.all([file, ...files.map(({ from }) => from)].map((from) => rm(from, { force: true })));
    }
  }

  const storage: ObjstoreStorage = {
    handle: (req, res) => s3rver.handle(req, res),
    close: () => s3rver.close(),

    async bucketExists(bucket) {
      return (await statOptional(bucketDirectory(directory, bucket)))?.isDirectory() ?? false;
    },
    async ensureBuckets(buckets) {
      for (const bucket of buckets) await makeBucket(bucket);
    },
    // Synchronous: a handful of tiny file operations, done faster than one round trip through libuv's pool.
    async reset(buckets) {
      for (const name of readdirSync(directory)) rmSync(path.join(directory, name), { recursive: true, force: true });
      for (const bucket of buckets) mkdirSync(bucketDirectory(directory, bucket), { recursive: true, mode: BUCKET_MODE });
    },
    async createBucket(bucket) {
      await makeBucket(bucket);
    },
    async deleteBucket(bucket) {
      await store().deleteBucket(bucket);
    },
    async bucketNames() {
      return (await store().listBuckets()).map((bucket) => bucket.name);
    },
    async bucketCreationDate(bucket) {
      return (await store().getBucket(bucket))?.creationDate ?? null;
    },
    async hasObjects(bucket) {
      return (await store().listObjects(bucket, { maxKeys: 1 })).objects.length > 0;
    },

    async objectKeys(bucket, prefix) {
      const keys: string[] = [];
      await collectKeys(bucketDirectory(directory, bucket), '', prefix, keys);
      return keys;
    },
    headObject: (bucket, key) => orNullWhenMissing(store().getMetadata(bucket, key)),
    objectExists: (bucket, key) => store().existsObject(bucket, key),
    async deleteObject(bucket, key) {
      await store().deleteObject(bucket, key);
    },
    storedMetadata: objectMetadata,
    async placeObject(bucket, key, file, etag, metadata, placing) {
      const files = objectFiles(store(), bucket, key);
      await placeWithSidecars(
        file,
        files.content,
        {
          [files.md5]: etag,
          [files.metadata]: JSON.stringify(metadata, null, 2),
        },
        placing,
      );
    },
    async putObjectTagging(bucket, key, tagging) {
      await store().putSubresource(bucket, key, taggingSubresource(tagging));
    },
    objectContentFile: (bucket, key) => objectFiles(store(), bucket, key).content,
    readObject: (bucket, key, range) => createReadStream(objectFiles(store(), bucket, key).content, range ?? {}),

    async uploadKey(bucket, uploadId) {
      return readOptional(uploadFiles(uploadDirectory(store(), bucket, uploadId)).key);
    },
    uploadInProgress: (bucket, uploadId) => describeUpload(uploadDirectory(store(), bucket, uploadId), uploadId),
    async uploadsInProgress(bucket) {
      const root = uploadsDirectory(store(), bucket);
      const uploads = await Promise.all((await readDirectoryNames(root)).map((uploadId) => describeUpload(path.join(root, uploadId), uploadId)));
      return uploads.filter((upload): upload is UploadInProgress => upload !== null);
    },
    async uploadedParts(bucket, uploadId) {
      const upload = uploadDirectory(store(), bucket, uploadId);
      const numbers = (await readDirectoryNames(upload)).map(partNumberOfFile).filter((number) => number !== null);
      const parts = await Promise.all(
        numbers.map(async (number): Promise<UploadedPart | null> => {
          const files = partFiles(upload, number);
          const [md5, stats, checksum] = await Promise.all([readOptional(files.md5), statOptional(files.content), readOptional(files.checksum)]);
          if (md5 === null || stats === null) return null;
          return { number, md5: md5.trim(), size: stats.size, lastModified: stats.mtime, checksum: JSON.parse(checksum ?? 'null') as PartChecksum | null };
        }),
      );
      return parts.filter((part): part is UploadedPart => part !== null).sort((a, b) => a.number - b.number);
    },
    async placePart(bucket, uploadId, partNumber, file, md5, checksum) {
      const files = partFiles(uploadDirectory(store(), bucket, uploadId), partNumber);
      // A part uploaded again without a checksum loses the one it had.
      await placeWithSidecars(file, files.content, { [files.md5]: md5, [files.checksum]: JSON.stringify(checksum) });
    },
    async completeUpload(bucket, key, uploadId, partNumbers, completion, record, placing) {
      const upload = uploadDirectory(store(), bucket, uploadId);
      const files = uploadFiles(upload);
      const createHeaders = JSON.parse(await readFile(files.createHeaders, 'utf8')) as Record<string, unknown>;
      const metadata = objectMetadata(bucket, key, createHeaders);
      const file = incomingFile(directory);
      let completionMetadata: Record<string, string>;
      try {
        for (const number of partNumbers) {
          const part = createReadStream(partFiles(upload, number).content);
          part.on('data', (data) => completion.onContent(data as Buffer));
          await pipeline(part, createWriteStream(file, { flags: 'a' }));
        }
        completionMetadata = await completion.metadata();
      } catch (error) {
        await rm(file, { force: true });
        throw error;
      }
      await storage.placeObject(bucket, key, file, completion.etag, { ...metadata, ...completionMetadata }, placing);
      // The record first, then the key (the upload is no longer in progress), then the parts.
      await writeFile(files.completed, await record(), { mode: PRIVATE_FILE_MODE });
      await rm(files.key, { force: true });
      const leftovers = (await readDirectoryNames(upload)).filter((name) => path.join(upload, name) !== files.completed);
      await Promise.all(leftovers.map((name) => rm(path.join(upload, name), { recursive: true, force: true })));
    },
    completedUpload: (bucket, uploadId) => readOptional(uploadFiles(uploadDirectory(store(), bucket, uploadId)).completed),
    async removeUpload(bucket, uploadId) {
      await rm(uploadDirectory(store(), bucket, uploadId), { recursive: true, force: true });
    },

    incomingFile: () => incomingFile(directory),

    listBucketObjects: (bucket) => listBucketObjects(directory, bucket),
    readTree: () => readTree(directory),
    treeProblem,
    stageTree: (entries, buckets) => stageTree(directory, entries, buckets),
    objectsOf,
  };
  return storage;
}
