/**
 * Operations the gateway handles itself, or checks before s3rver sees them, because s3rver
 * 3.7.1 gets them wrong. Each entry is keyed by the operation name from `classifyOperation`
 * and runs only after the request has been authenticated, authorised and validated; an
 * operation without an entry goes straight to s3rver.
 *
 * This is where further fixes belong; the listings are in listing.ts, the other multipart
 * operations in multipart.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import type { S3rverBackend } from './backend.ts';
import type { BucketDirectory } from './bucket-directory.ts';
import { errors, escapeXml, GatewayError } from './errors.ts';
import type { ChunkSignatures } from './signature.ts';
import type { Exchange } from './exchange.ts';
import { deleteObjects } from './delete-objects.ts';
import { listObjects, listObjectsV2 } from './listing.ts';
import {
  abortMultipartUpload,
  listMultipartUploads,
  listParts,
  multipartEtag,
  requireMinimumPartSizes,
} from './multipart.ts';
import { singleParam, validatePartNumber, validateUploadId, type RequestTarget } from './target.ts';
import { storeMultipartObject, storeObject, storePart } from './uploads.ts';
import type { ObjstoreKey } from './types.ts';
import { decodeXmlText } from './xml-text.ts';

export interface OperationContext {
  readonly exchange: Exchange;
  readonly target: RequestTarget;
  readonly backend: S3rverBackend;
  readonly buckets: BucketDirectory;
  /** The key that signed the request; null for an unsigned one. */
  readonly key: ObjstoreKey | null;
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

/** Parts listed in a CompleteMultipartUpload body, ETags without quotes. */
export function parseCompleteMultipartUpload(xml: string): CompletedPart[] {
  if (!/<CompleteMultipartUpload[\s>]/.test(xml) || !/<\/CompleteMultipartUpload>/.test(xml)) {
    throw new GatewayError(errors.malformedXml());
  }
  const parts: CompletedPart[] = [];
  for (const match of xml.matchAll(/<Part(?:\s[^>]*)?>([\s\S]*?)<\/Part>/g)) {
    const body = match[1]!;
    const number = /<PartNumber>\s*(\d{1,9})\s*<\/PartNumber>/.exec(body)?.[1];
    const etag = /<ETag>([\s\S]*?)<\/ETag>/.exec(body)?.[1];
    if (number === undefined || etag === undefined) throw new GatewayError(errors.malformedXml());
    parts.push({ number: Number(number), etag: decodeXmlText(etag).trim().replace(/"/g, '') });
  }
  if (parts.length === 0) throw new GatewayError(errors.malformedXml());
  return parts;
}

const MAX_COMPLETE_BODY_BYTES = 4 * 1024 * 1024;

/**
 * s3rver streams the listed parts without checking they exist (a missing part crashes the
 * whole process: unhandled 'error' on a fs.ReadStream), and straight into the object file.
 * Check the upload, the part order and every part's ETag first, then assemble the object
 * beside the store and rename it into place (uploads.ts).
 */
const completeMultipartUpload: OperationOverride = async (ctx) => {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  const { directory } = await requireUpload(ctx);
  const parts = parseCompleteMultipartUpload((await ctx.readBody(MAX_COMPLETE_BODY_BYTES)).toString('utf8'));

  let previous = 0;
  for (const part of parts) {
    if (part.number < 1 || part.number > 10000) {
      throw new GatewayError(errors.invalidArgument('Part number must be an integer between 1 and 10000, inclusive'));
    }
    if (part.number <= previous) throw new GatewayError(errors.invalidPartOrder());
    previous = part.number;
  }
  for (const part of parts) {
    const md5 = await readOptional(path.join(directory, `${part.number}.md5`));
    if (md5 === null || md5.trim().toLowerCase() !== part.etag.toLowerCase()) {
      throw new GatewayError(errors.invalidPart());
    }
  }
  await requireMinimumPartSizes(directory, parts);

  const { bucket, key } = ctx.target;
  const etag = multipartEtag(parts);
  await storeMultipartObject(ctx, directory, parts, etag);
  const { req, res } = ctx.exchange;
  const location = `http://${req.headers.host ?? 'localhost'}${ctx.target.rawPath}`;
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Location>${escapeXml(location)}</Location>` +
    `<Bucket>${escapeXml(bucket!)}</Bucket>` +
    `<Key>${escapeXml(key!)}</Key>` +
    `<ETag>${escapeXml(JSON.stringify(etag))}</ETag>` +
    '</CompleteMultipartUploadResult>';
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/xml');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
};

export const operationOverrides: Readonly<Partial<Record<string, OperationOverride>>> = {
  PutObject: putObject,
  UploadPart: uploadPart,
  CompleteMultipartUpload: completeMultipartUpload,
  AbortMultipartUpload: abortMultipartUpload,
  ListParts: listParts,
  ListMultipartUploads: listMultipartUploads,
  ListObjects: listObjects,
  ListObjectsV2: listObjectsV2,
  DeleteObjects: deleteObjects,
};
