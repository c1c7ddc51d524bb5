/**
 * The memory storage as the entries of the files layout (files-layout.ts) and back: a snapshot
 * holds the same tree whichever storage took it, so it restores into either.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

import type { ObjstoreTreeEntry } from '../types.ts';
import {
  bucketCorsFile,
  keyOfObjectFile,
  objectFiles,
  partFiles,
  partNumberOfFile,
  uploadDirectory,
  uploadFiles,
  uploadsDirectory,
} from './files-layout.ts';
import { emptyBucket, type MemoryBucket, type MemoryBuckets, type MemoryUpload } from './memory-state.ts';
import type { PartChecksum } from './storage.ts';

/** A layout path (made with root '') as a tree entry's path: '/'-separated. */
const entryPath = (file: string) => file.split(path.sep).join('/');

const contentOf = (chunks: readonly Buffer[]) => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));

/** Orders paths as readTree walks a storage: name by name, so a folder comes before what it holds. */
function compareEntryPaths(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return left.length - right.length;
}

function uploadFileEntries(bucket: string, uploadId: string, upload: MemoryUpload): [string, Uint8Array][] {
  const directory = uploadDirectory('', bucket, uploadId);
  const files = uploadFiles(directory);
  if (upload.completed !== null) return [[files.completed, Buffer.from(upload.completed)]];
  const entries: [string, Uint8Array][] = [
    [files.key, Buffer.from(upload.key)],
    [files.createHeaders, Buffer.from(JSON.stringify(upload.createHeaders))],
  ];
  for (const [number, part] of upload.parts) {
    const partPaths = partFiles(directory, number);
    entries.push([partPaths.content, contentOf(part.chunks)], [partPaths.md5, Buffer.from(part.md5)]);
    if (part.checksum !== null) entries.push([partPaths.checksum, Buffer.from(JSON.stringify(part.checksum))]);
  }
  return entries;
}

function bucketFileEntries(name: string, bucket: MemoryBucket): [string, Uint8Array][] {
  const entries: [string, Uint8Array][] = [];
  if (bucket.cors !== null) entries.push([bucketCorsFile('', name), Buffer.from(bucket.cors)]);
  for (const [key, object] of bucket.objects) {
    const files = objectFiles('', name, key);
    entries.push(
      [files.content, contentOf(object.chunks)],
      [files.md5, Buffer.from(object.etag)],
      [files.metadata, Buffer.from(JSON.stringify(object.metadata, null, 2))],
    );
    if (object.tagging !== null) entries.push([files.tagging, Buffer.from(object.tagging)]);
  }
  for (const [uploadId, upload] of bucket.uploads) entries.push(...uploadFileEntries(name, uploadId, upload));
  return entries;
}

/** Every folder and file the files storage would hold for these buckets, parents first, in name order. */
export function treeOf(buckets: MemoryBuckets): ObjstoreTreeEntry[] {
  const entries = new Map<string, Uint8Array | null>();
  for (const [name, bucket] of buckets) {
    entries.set(name, null);
    for (const [file, data] of bucketFileEntries(name, bucket)) {
      const names = entryPath(file).split('/');
      for (let depth = 1; depth < names.length; depth++) entries.set(names.slice(0, depth).join('/'), null);
      entries.set(names.join('/'), data);
    }
  }
  return [...entries.keys()].sort(compareEntryPaths).map((entry) => ({ path: entry, data: entries.get(entry)! }));
}

const textOf = (data: Uint8Array | undefined) => (data === undefined ? null : Buffer.from(data).toString('utf8'));

/**
 * Reads an upload's files (names inside its folder) into an upload; null when they make none (no key and no record).
 */
function readUpload(files: Map<string, Uint8Array>, now: Date): MemoryUpload | null {
  const key = textOf(files.get('key'));
  const completed = textOf(files.get('completed'));
  if (key === null)
    return completed === null ? null : { key: '', createHeaders: {}, initiated: now, parts: new Map(), completed };
  let createHeaders: Record<string, unknown> = {};
  try {
    createHeaders = JSON.parse(textOf(files.get('metadata')) ?? '{}') as Record<string, unknown>;
  } catch {
    // As the files storage reads an unreadable one: no headers.
  }
  const upload: MemoryUpload = { key, createHeaders, initiated: now, parts: new Map(), completed: null };
  for (const [name, data] of files) {
    const number = partNumberOfFile(name);
    const md5 = textOf(files.get(`${name}.md5`));
    if (number === null || md5 === null) continue;
    const checksum = JSON.parse(textOf(files.get(`${name}.checksum`)) ?? 'null') as PartChecksum | null;
    upload.parts.set(number, {
      chunks: [Buffer.from(data)],
      size: data.byteLength,
      md5: md5.trim(),
      checksum,
      lastModified: now,
    });
  }
  return upload;
}

/**
 * The buckets a tree of the files layout (that treeProblem found usable) holds, each of
 * `buckets` at least; what the layout holds beside objects, uploads and CORS documents is left out.
 */
export function bucketsOf(entries: readonly ObjstoreTreeEntry[], buckets: readonly string[], now: Date): MemoryBuckets {
  const files = new Map(entries.flatMap(({ path: file, data }) => (data === null ? [] : [[file, data] as const])));
  const result: MemoryBuckets = new Map(
    [...buckets, ...entries.filter(({ path: entry }) => !entry.includes('/')).map(({ path: entry }) => entry)].map(
      (name) => [name, emptyBucket(now)],
    ),
  );
  const uploadFolders = new Map<string, { bucket: string; uploadId: string; files: Map<string, Uint8Array> }>();
  for (const [file, data] of files) {
    const [name, ...rest] = file.split('/');
    const bucket = result.get(name!)!;
    if (rest.length === 1 && file === entryPath(bucketCorsFile('', name!))) {
      bucket.cors = textOf(data);
    } else if (rest.length === 3 && `${name}/${rest[0]}` === entryPath(uploadsDirectory('', name!))) {
      const folder = `${name}/${rest[0]}/${rest[1]}`;
      const upload = uploadFolders.get(folder) ?? {
        bucket: name!,
        uploadId: rest[1]!,
        files: new Map<string, Uint8Array>(),
      };
      upload.files.set(rest[2]!, data);
      uploadFolders.set(folder, upload);
    } else {
      const key = keyOfObjectFile(rest.join('/'));
      if (key === null) continue;
      const base = file.slice(0, -'object'.length);
      const md5 = textOf(files.get(`${base}object.md5`));
      const content = Buffer.from(data);
      bucket.objects.set(key, {
        chunks: [content],
        size: content.length,
        // A data dir s3rver's CopyObject wrote may lack the MD5 file: the files storage makes it from the content too.
        etag: md5 ?? createHash('md5').update(content).digest('hex'),
        metadata: JSON.parse(textOf(files.get(`${base}metadata.json`)) ?? '{}') as Record<string, string>,
        tagging: textOf(files.get(`${base}tagging.xml`)),
        lastModified: now,
      });
    }
  }
  for (const { bucket, uploadId, files: uploadFiles } of uploadFolders.values()) {
    const upload = readUpload(uploadFiles, now);
    if (upload !== null) result.get(bucket)!.uploads.set(uploadId, upload);
  }
  return result;
}
