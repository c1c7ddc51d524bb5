/**
 * Operations the gateway handles itself, or checks before s3rver sees them, because s3rver
 * 3.7.1 gets them wrong. Each entry is keyed by the operation name from `classifyOperation`
 * and runs only after the request has been authenticated, authorised and validated; an
 * operation without an entry goes straight to s3rver.
 *
 * This is where further fixes belong; the listings are in listing.ts, the other multipart
 * operations in multipart.ts, and the overrides that make multipart uploads and browser form
 * uploads behave exactly as S3 (with this table beneath them) in overrides.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import type { S3rverBackend } from './backend.ts';
import { errors, GatewayError } from './errors.ts';
import type { ChunkSignatures } from './signature.ts';
import type { Exchange } from './exchange.ts';
import { deleteObjects } from './delete-objects.ts';
import { listObjects, listObjectsV2 } from './listing.ts';
import { abortMultipartUpload, listMultipartUploads, listParts } from './multipart.ts';
import { singleParam, validatePartNumber, validateUploadId, type RequestTarget } from './target.ts';
import { storeObject, storePart } from './uploads.ts';

export interface OperationContext {
  readonly exchange: Exchange;
  readonly target: RequestTarget;
  readonly backend: S3rverBackend;
  /** The chunk signatures of an aws-chunked body with signed chunks, to check while decoding it. */
  readonly chunkSignatures: ChunkSignatures;
  /** Hands the request to s3rver (first sending 100 Continue if the client is waiting for it). */
  delegate(): void;
  /** Reads the whole body (first sending 100 Continue); MaxMessageLengthExceeded beyond `limit`. */
  readBody(limit: number): Promise<Buffer>;
}

/** Handles an operation; throw a GatewayError to answer with an S3 error. */
export type OperationOverride = (ctx: OperationContext) => Promise<void>;

export function isMissingFile(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export async function readOptional(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
}

/**
 * Throws NoSuchUpload unless `uploadId` is an upload in progress for exactly this bucket and key
 * (s3rver itself would create the upload directory on UploadPart, and complete an upload under
 * the key it was started with whatever key the request names).
 */
export async function requireUpload(ctx: OperationContext): Promise<{ uploadId: string; directory: string }> {
  const { bucket, key, query } = ctx.target;
  const uploadId = validateUploadId(singleParam(query, 'uploadId'));
  const directory = ctx.backend.uploadDirectory(bucket!, uploadId);
  const startedFor = await readOptional(path.join(directory, 'key'));
  if (startedFor === null || startedFor !== key) throw new GatewayError(errors.noSuchUpload());
  return { uploadId, directory };
}

/** s3rver answers NoSuchBucket itself; leave those requests to it unchanged. */
export async function bucketExists(ctx: OperationContext): Promise<boolean> {
  return Boolean(await ctx.backend.store.getBucket(ctx.target.bucket!));
}

const uploadPart: OperationOverride = async (ctx) => {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  const { directory } = await requireUpload(ctx);
  await storePart(ctx, directory, validatePartNumber(singleParam(ctx.target.query, 'partNumber')));
};

/** s3rver stores the body as sent (aws-chunked framing included) and checks none of its digests. */
const putObject: OperationOverride = async (ctx) => {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  await storeObject(ctx);
};

export interface CompletedPart {
  number: number;
  etag: string;
}

export const operationOverrides: Readonly<Partial<Record<string, OperationOverride>>> = {
  PutObject: putObject,
  UploadPart: uploadPart,
  AbortMultipartUpload: abortMultipartUpload,
  ListParts: listParts,
  ListMultipartUploads: listMultipartUploads,
  ListObjects: listObjects,
  ListObjectsV2: listObjectsV2,
  DeleteObjects: deleteObjects,
};
