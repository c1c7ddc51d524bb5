/**
 * CompleteMultipartUpload as S3 does it: the upload, the part order, every part's ETag and
 * checksum and the part sizes are checked first; the storage then assembles the object and puts
 * it in place whole, with its checksum (multipart-checksums.ts; a checksum
 * of the whole object sent in `x-amz-checksum-*` must match it) and the layout of its parts
 * (multipart-layout.ts).
 *
 * S3 answers a CompleteMultipartUpload repeated after success with the same result: the storage
 * keeps a record of the completed upload, answered to a request that lists the same parts again.
 */
import { createHash } from 'node:crypto';

import type { UploadedPart } from '../../storage/storage.ts';
import { CHECKSUM_ALGORITHMS } from '../../checksum-algorithms.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { singleParam, validateUploadId } from '../target.ts';
import { childElements, childText, parseRequestDocument, sendXmlResult } from '../xml.ts';
import { placeUnderWriteConditions, requireWriteConditionsMet } from './conditional-operations.ts';
import { requireUpload, type OperationContext, type OperationHandler } from './context.ts';
import {
  checksumElementName,
  completedObjectChecksum,
  readCompletionChecksum,
  requireCompletionChecksum,
  requireCompletionChecksumType,
  requireListedPartChecksum,
  storedObjectChecksum,
  uploadChecksumOf,
  type ListedPartChecksums,
  type ObjectChecksum,
  type UploadChecksum,
} from './multipart-checksums.ts';
import { layoutMetadata, type ObjectPart } from './multipart-layout.ts';

const MAX_COMPLETE_BODY_BYTES = 4 * 1024 * 1024;

export interface CompletedPart {
  number: number;
  etag: string;
}

export interface ListedPart extends CompletedPart {
  checksums: ListedPartChecksums;
}

/** A part number as CompleteMultipartUpload lists it: digits, maybe surrounded by white space. */
const PART_NUMBER_TEXT = /^\s*\d{1,9}\s*$/;

/** Parts listed in a CompleteMultipartUpload body, ETags without quotes, with the checksums listed for them. */
export function parseCompleteMultipartUpload(xml: string): ListedPart[] {
  const request = parseRequestDocument(xml, 'CompleteMultipartUpload', ['Part']);
  const parts = childElements(request, 'Part').map((part): ListedPart => {
    const number = typeof part === 'string' ? undefined : childText(part, 'PartNumber');
    const etag = typeof part === 'string' ? undefined : childText(part, 'ETag');
    if (typeof part === 'string' || number === undefined || !PART_NUMBER_TEXT.test(number) || etag === undefined) {
      throw new GatewayError(errors.malformedXml());
    }
    const checksums: ListedPartChecksums = {};
    for (const algorithm of CHECKSUM_ALGORITHMS) {
      const value = childText(part, checksumElementName(algorithm));
      if (value !== undefined) checksums[algorithm] = value.trim();
    }
    return { number: Number(number), etag: etag.trim().replace(/"/g, ''), checksums };
  });
  if (parts.length === 0) throw new GatewayError(errors.malformedXml());
  return parts;
}

/** What a completed upload answers, again to a repeated request. */
interface CompletedUpload {
  key: string;
  /** The parts it was completed with, for recognising a repeated request. */
  parts: CompletedPart[];
  etag: string;
  checksum: ObjectChecksum;
}

const sameParts = (a: readonly CompletedPart[], b: readonly CompletedPart[]) =>
  a.length === b.length && a.every((part, index) => part.number === b[index]!.number && part.etag === b[index]!.etag);

const partsOf = (parts: readonly CompletedPart[]): CompletedPart[] =>
  parts.map(({ number, etag }) => ({ number, etag }));

/** The upload's record, when this very key was completed with exactly these parts. */
async function completedBefore(
  ctx: OperationContext,
  parts: readonly CompletedPart[],
): Promise<CompletedUpload | null> {
  const uploadId = validateUploadId(singleParam(ctx.target.query, 'uploadId'));
  const stored = await ctx.storage.completedUpload(ctx.target.bucket!, uploadId);
  if (stored === null) return null;
  const completed = JSON.parse(stored) as CompletedUpload;
  return completed.key === ctx.target.key && sameParts(completed.parts, partsOf(parts)) ? completed : null;
}

/** The upload in progress the request names; null when there is none (perhaps no longer). */
async function uploadInProgress(ctx: OperationContext): Promise<string | null> {
  try {
    return await requireUpload(ctx);
  } catch (err) {
    if (err instanceof GatewayError && err.spec.code === 'NoSuchUpload') return null;
    throw err;
  }
}

function requireAscendingParts(parts: readonly ListedPart[]): void {
  let previous = 0;
  for (const part of parts) {
    if (part.number < 1 || part.number > 10000) {
      throw new GatewayError(errors.invalidPartNumber());
    }
    // S3 refuses a part listed twice as it refuses parts out of order.
    if (part.number <= previous) throw new GatewayError(errors.invalidPartOrder());
    previous = part.number;
  }
}

/**
 * Checks every listed part against the part uploaded under its number (ETag, checksum) and S3's
 * minimum size of every part but the last; answers the object's parts.
 */
function checkListedParts(
  upload: UploadChecksum | null,
  parts: readonly ListedPart[],
  uploaded: readonly UploadedPart[],
  minPartSize: number,
): ObjectPart[] {
  const byNumber = new Map(uploaded.map((part) => [part.number, part]));
  const objectParts = parts.map((part): ObjectPart => {
    const stored = byNumber.get(part.number);
    if (stored === undefined || stored.md5.toLowerCase() !== part.etag.toLowerCase())
      throw new GatewayError(errors.invalidPart());
    requireListedPartChecksum(upload, part.number, part.checksums, stored.checksum);
    return { number: part.number, size: stored.size, checksum: upload === null ? null : stored.checksum!.value };
  });
  if (objectParts.slice(0, -1).some((part) => part.size < minPartSize)) throw new GatewayError(errors.entityTooSmall());
  return objectParts;
}

/** `x-amz-mp-object-size`, when sent, must be the size of the parts listed. */
function requireDeclaredSize(ctx: OperationContext, parts: readonly ObjectPart[]): void {
  const declared = ctx.exchange.req.headers['x-amz-mp-object-size'];
  if (declared === undefined) return;
  const size = parts.reduce((sum, part) => sum + part.size, 0);
  if (!/^\d+$/.test(String(declared).trim())) {
    throw new GatewayError(errors.invalidObjectSize());
  }
  if (Number(String(declared).trim()) !== size) {
    throw new GatewayError(errors.objectSizeMismatch());
  }
}

/** S3's ETag of a multipart object (unquoted): the MD5 of the parts' binary MD5s, then `-<part count>`. */
function multipartEtag(parts: readonly CompletedPart[]): string {
  const digests = Buffer.concat(parts.map((part) => Buffer.from(part.etag, 'hex')));
  return `${createHash('md5').update(digests).digest('hex')}-${parts.length}`;
}

function sendCompleted(ctx: OperationContext, completed: CompletedUpload): void {
  const { checksum } = completed;
  sendXmlResult(ctx.exchange.res, 'CompleteMultipartUploadResult', {
    Location: `http://${ctx.exchange.req.headers.host ?? 'localhost'}${ctx.target.rawPath}`,
    Bucket: ctx.target.bucket!,
    Key: completed.key,
    ETag: JSON.stringify(completed.etag),
    [checksumElementName(checksum.algorithm)]: checksum.value,
    ChecksumType: checksum.type,
  });
}

export const completeMultipartUpload: OperationHandler = async (ctx) => {
  const uploadId = await uploadInProgress(ctx);
  const parts = parseCompleteMultipartUpload((await ctx.readBody(MAX_COMPLETE_BODY_BYTES)).toString('utf8'));
  if (uploadId === null) {
    const repeated = await completedBefore(ctx, parts);
    if (repeated === null) throw new GatewayError(errors.noSuchUpload());
    return sendCompleted(ctx, repeated);
  }
  await requireWriteConditionsMet(ctx);
  requireAscendingParts(parts);
  const bucket = ctx.target.bucket!;
  const upload = await uploadChecksumOf(ctx, uploadId);
  requireCompletionChecksumType(upload, ctx.exchange.req.headers);
  const sentChecksum = readCompletionChecksum(ctx.exchange.req.headers);
  const objectParts = checkListedParts(
    upload,
    parts,
    await ctx.storage.uploadedParts(bucket, uploadId),
    ctx.minPartSize,
  );
  requireDeclaredSize(ctx, objectParts);

  const etag = multipartEtag(parts);
  const checksum = completedObjectChecksum(
    upload,
    objectParts.map((part) => part.checksum),
  );
  const completed = async (): Promise<CompletedUpload> => ({
    key: ctx.target.key!,
    parts: partsOf(parts),
    etag,
    checksum: await checksum.digest(),
  });
  await ctx.storage.completeUpload(
    bucket,
    ctx.target.key!,
    uploadId,
    parts.map((part) => part.number),
    {
      etag,
      onContent: (data) => checksum.update(data),
      // Checked once the content is whole, before the object is placed: a mismatch leaves the upload in progress.
      metadata: async () => {
        const objectChecksum = await checksum.digest();
        requireCompletionChecksum(sentChecksum, objectChecksum);
        return { ...layoutMetadata({ parts: objectParts, checksum: upload }), ...storedObjectChecksum(objectChecksum) };
      },
    },
    async () => JSON.stringify(await completed()),
    (place) => placeUnderWriteConditions(ctx, place),
  );
  sendCompleted(ctx, await completed());
};
