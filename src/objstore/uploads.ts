/**
 * PutObject, UploadPart and the object of CompleteMultipartUpload, stored the way s3rver's
 * filesystem store lays them out, but only after the body has been received and verified in
 * full (see body.ts): the object (or part) file is put in place by one rename, so it is never
 * visible with bytes that failed a check, nor half-written (s3rver itself writes straight into
 * the object file, which a crash would leave truncated and listed).
 *
 * An object's checksum is kept in its s3rver metadata file (`x-amz-checksum-<algorithm>`,
 * `x-amz-checksum-type`). s3rver itself never answers it; the backend adds it to GetObject /
 * HeadObject responses that ask for it. Copies keep it along with the bytes; every other write
 * of s3rver's rewrites the metadata without it.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { objectMetadata } from './backend.ts';
import { incomingFile, planBody, receiveBody, storedContentEncoding } from './body.ts';
import {
  checksumHeaderName,
  DEFAULT_CHECKSUM_ALGORITHM,
  objectChecksumHeaders,
  startChecksum,
  type ChecksumAlgorithm,
} from './checksums.ts';
import type { CompletedPart, OperationContext } from './compat.ts';
import { partChecksumFile, requirePartChecksum, uploadChecksumOf, type PartChecksum } from './multipart-checksums.ts';

/** Writes `contents` to a temporary file beside the store, to be renamed into place. */
async function stage(root: string, contents: string): Promise<string> {
  const file = incomingFile(root);
  await writeFile(file, contents);
  return file;
}

/**
 * Renames each sidecar file (path -> contents) into place, then `file` to `destination`: the
 * sidecars are written beside the store first so no reader sees a half-written one, and the
 * body comes last, so a new object appears whole with its ETag and metadata even if the
 * process dies in between. Nothing is moved unless every file is ready; whatever was not moved
 * is removed.
 */
export async function placeWithSidecars(
  ctx: OperationContext,
  file: string,
  destination: string,
  sidecars: Record<string, string>,
): Promise<void> {
  const files: { from: string; to: string }[] = [];
  try {
    for (const [to, contents] of Object.entries(sidecars)) {
      files.push({ from: await stage(ctx.backend.store.rootDirectory, contents), to });
    }
    files.push({ from: file, to: destination });
    await mkdir(path.dirname(destination), { recursive: true });
    for (const { from, to } of files) await rename(from, to);
  } finally {
    await Promise.all([file, ...files.map(({ from }) => from)].map((from) => rm(from, { force: true })));
  }
}

function respondStored(ctx: OperationContext, md5: string, headers: Record<string, string>): void {
  const { res } = ctx.exchange;
  res.statusCode = 200;
  res.setHeader('ETag', JSON.stringify(md5));
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', 0);
  res.end();
}

/** PutObject into an existing bucket. */
export async function storeObject(ctx: OperationContext): Promise<void> {
  const { bucket, key } = ctx.target;
  const { req } = ctx.exchange;
  const plan = planBody(req.headers);
  const metadata = objectMetadata(bucket!, key!, {
    ...req.headers,
    'content-encoding': storedContentEncoding(req.headers['content-encoding']),
  });
  const body = await receiveBody(ctx, plan, DEFAULT_CHECKSUM_ALGORITHM);
  const checksum = body.checksum ? objectChecksumHeaders(body.checksum.algorithm, body.checksum.value) : {};
  await placeObject(ctx, { bucket: bucket!, key: key! }, body.file, body.md5, { ...metadata, ...checksum });
  respondStored(ctx, body.md5, checksum);
}

/** Puts the content in `file` in place as the object `bucket/key`, with its ETag (hex MD5) and metadata. */
export async function placeObject(
  ctx: OperationContext,
  { bucket, key }: { bucket: string; key: string },
  file: string,
  md5: string,
  metadata: Record<string, string>,
): Promise<void> {
  const store = ctx.backend.store;
  await placeWithSidecars(ctx, file, store.getResourcePath(bucket, key, 'object'), {
    [store.getResourcePath(bucket, key, 'object.md5')]: md5,
    [store.getResourcePath(bucket, key, 'metadata.json')]: JSON.stringify(metadata, null, 2),
  });
}

/** UploadPart into an upload in progress, whose directory is `uploadDirectory`. */
export async function storePart(ctx: OperationContext, uploadDirectory: string, partNumber: number): Promise<void> {
  const plan = planBody(ctx.exchange.req.headers);
  requirePartChecksum(await uploadChecksumOf(uploadDirectory), plan.checksum);
  const body = await receiveBody(ctx, plan, null);
  const part = path.join(uploadDirectory, String(partNumber));
  await placeWithSidecars(ctx, body.file, part, partSidecars(part, body.md5, body.checksum));
  respondStored(ctx, body.md5, body.checksum ? { [checksumHeaderName(body.checksum.algorithm)]: body.checksum.value } : {});
}

/** A part's ETag and, when it came with one, its checksum; a part replaced without one loses the old one. */
export function partSidecars(part: string, md5: string, checksum: PartChecksum | null): Record<string, string> {
  return { [`${part}.md5`]: md5, [partChecksumFile(part)]: checksum === null ? 'null' : JSON.stringify(checksum) };
}

/** What CompleteMultipartUpload stores besides the joined parts. */
export interface MultipartObject {
  etag: string;
  /** A checksum to compute over the joined content (a full-object checksum), or null. */
  checksumAlgorithm: ChecksumAlgorithm | null;
  /** Metadata kept beside the creation headers, given the content's checksum if one was computed. */
  metadata(checksum: string | null): Record<string, string>;
}

/**
 * The object of CompleteMultipartUpload (whose parts have been checked): the parts joined into
 * a temporary file, put in place with S3's multipart ETag and the metadata given when the
 * upload was created. Answers the content's checksum when asked for one; the caller retires the upload.
 */
export async function storeMultipartObject(
  ctx: OperationContext,
  uploadDirectory: string,
  parts: readonly CompletedPart[],
  object: MultipartObject,
): Promise<string | null> {
  const { bucket, key } = ctx.target;
  const store = ctx.backend.store;
  const createHeaders = JSON.parse(await readFile(path.join(uploadDirectory, 'metadata'), 'utf8')) as Record<string, unknown>;
  const metadata = objectMetadata(bucket!, key!, createHeaders);
  const checksum = object.checksumAlgorithm === null ? null : startChecksum(object.checksumAlgorithm);
  const file = incomingFile(store.rootDirectory);
  try {
    for (const part of parts) {
      const source = createReadStream(path.join(uploadDirectory, String(part.number)));
      if (checksum) source.on('data', (data) => checksum.update(data as Buffer));
      await pipeline(source, createWriteStream(file, { flags: 'a' }));
    }
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  }
  const value = checksum === null ? null : await checksum.digest();
  await placeWithSidecars(ctx, file, store.getResourcePath(bucket!, key!, 'object'), {
    [store.getResourcePath(bucket!, key!, 'object.md5')]: object.etag,
    [store.getResourcePath(bucket!, key!, 'metadata.json')]: JSON.stringify({ ...metadata, ...object.metadata(value) }, null, 2),
  });
  return value;
}
