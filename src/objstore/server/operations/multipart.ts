/**
 * The multipart operations s3rver lacks (AbortMultipartUpload is a 405 there; it has no
 * ListParts or ListMultipartUploads), and what CompleteMultipartUpload needs to behave as S3
 * does: the part checks, the minimum part size and S3's multipart ETag.
 */
import { createHash } from 'node:crypto';

import type { UploadedPart, UploadInProgress } from '../../storage/storage.ts';
import { errors, GatewayError } from '../errors.ts';
import {
  commonPrefixesOf,
  compareKeys,
  itemsOf,
  pageOf,
  parseEncodingType,
  parseIntegerParam,
  parsePrefixAndDelimiter,
  requireNonNegative,
  type NameEncoder,
} from './paging.ts';
import { commonPrefixes, OWNER, s3Timestamp } from './result-xml.ts';
import { singleParam } from '../target.ts';
import { bucketExists, requireUpload, type OperationContext, type OperationOverride } from './context.ts';
import { childElements, childText, parseRequestDocument, sendXmlResult, type XmlContent } from '../xml.ts';

/** S3's minimum size of every part but the last. */
const MIN_PART_SIZE = 5 * 1024 * 1024;
/** The most parts (ListParts) or uploads (ListMultipartUploads) one page holds, and the default. */
const MAX_PER_PAGE = 1000;
const MAX_COMPLETE_BODY_BYTES = 4 * 1024 * 1024;

/** The storage class named at CreateMultipartUpload; STANDARD when none was. */
function storageClassOf(upload: UploadInProgress): string {
  const storageClass = upload.createHeaders?.['x-amz-storage-class'];
  return typeof storageClass === 'string' ? storageClass : 'STANDARD';
}

/** The bucket's uploads in progress: by key, then by initiation (as S3 lists them). */
async function uploadsInProgress(ctx: OperationContext, bucket: string): Promise<UploadInProgress[]> {
  return (await ctx.storage.uploadsInProgress(bucket)).sort(
    (a, b) => compareKeys(a.key, b.key) || a.initiated.getTime() - b.initiated.getTime() || compareKeys(a.uploadId, b.uploadId),
  );
}

/** AbortMultipartUpload: 204, and the upload and its parts are gone. */
export async function abortMultipartUpload(ctx: OperationContext): Promise<void> {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  await ctx.storage.removeUpload(ctx.target.bucket!, await requireUpload(ctx));
  const { res } = ctx.exchange;
  res.statusCode = 204;
  res.end();
}

function partContent(part: UploadedPart): XmlContent {
  return {
    PartNumber: part.number,
    LastModified: s3Timestamp(part.lastModified),
    ETag: JSON.stringify(part.md5),
    Size: part.size,
  };
}

/** ListParts, paged by `part-number-marker`. */
export async function listParts(ctx: OperationContext): Promise<void> {
  const { query } = ctx.target;
  const maxParts = parseIntegerParam(query, 'max-parts', MAX_PER_PAGE);
  const marker = parseIntegerParam(query, 'part-number-marker', 0);
  if (!(await bucketExists(ctx))) return ctx.delegate();

  const uploadId = await requireUpload(ctx);
  requireNonNegative(maxParts, 'max-parts');
  requireNonNegative(marker, 'part-number-marker');
  const limit = Math.min(maxParts, MAX_PER_PAGE);
  const bucket = ctx.target.bucket!;
  const [uploads, parts] = await Promise.all([ctx.storage.uploadsInProgress(bucket), ctx.storage.uploadedParts(bucket, uploadId)]);
  const upload = uploads.find((candidate) => candidate.uploadId === uploadId);
  if (upload === undefined) throw new GatewayError(errors.noSuchUpload());
  const remaining = parts.filter((part) => part.number > marker);
  const page = remaining.slice(0, limit);
  sendXmlResult(ctx.exchange.res, 'ListPartsResult', {
    Bucket: bucket,
    Key: upload.key,
    UploadId: uploadId,
    Initiator: OWNER,
    Owner: OWNER,
    StorageClass: storageClassOf(upload),
    PartNumberMarker: marker,
    // As S3: the last part listed, 0 on an empty page, and there also when the list is complete
    // (so clients must stop on IsTruncated, not on a missing marker).
    NextPartNumberMarker: page.at(-1)?.number ?? 0,
    MaxParts: limit,
    IsTruncated: remaining.length > page.length && limit > 0,
    Part: page.map(partContent),
  });
}

function uploadContent(upload: UploadInProgress, encode: NameEncoder): XmlContent {
  return {
    Key: encode(upload.key),
    UploadId: upload.uploadId,
    Initiator: OWNER,
    Owner: OWNER,
    StorageClass: storageClassOf(upload),
    Initiated: s3Timestamp(upload.initiated),
  };
}

/**
 * ListMultipartUploads, paged by `key-marker` and `upload-id-marker` (which S3 ignores without a
 * key marker, and refuses when it names no upload of that key).
 */
export async function listMultipartUploads(ctx: OperationContext): Promise<void> {
  const { query } = ctx.target;
  const maxUploads = parseIntegerParam(query, 'max-uploads', MAX_PER_PAGE);
  if (!(await bucketExists(ctx))) return ctx.delegate();

  const bucket = ctx.target.bucket!;
  const { encodingType, encode } = parseEncodingType(query);
  requireNonNegative(maxUploads, 'max-uploads');
  const { prefix, delimiter } = parsePrefixAndDelimiter(query);
  const keyMarker = singleParam(query, 'key-marker') ?? '';
  const uploadIdMarker = keyMarker === '' ? '' : (singleParam(query, 'upload-id-marker') ?? '');

  let uploads = await uploadsInProgress(ctx, bucket);
  if (uploadIdMarker !== '') {
    const at = uploads.findIndex((upload) => upload.key === keyMarker && upload.uploadId === uploadIdMarker);
    if (at === -1) throw new GatewayError(errors.invalidArgument('Invalid uploadId marker'));
    uploads = uploads.slice(at + 1);
  }
  const limit = Math.min(maxUploads, MAX_PER_PAGE);
  const page = pageOf(uploads, (upload) => upload.key, {
    prefix,
    delimiter,
    marker: keyMarker,
    includeMarkerKey: uploadIdMarker !== '',
    limit,
  });

  const last = page.entries.at(-1);
  sendXmlResult(ctx.exchange.res, 'ListMultipartUploadsResult', {
    Bucket: bucket,
    KeyMarker: encode(keyMarker),
    UploadIdMarker: uploadIdMarker,
    NextKeyMarker: last ? encode(last.name) : '',
    NextUploadIdMarker: last?.kind === 'item' ? last.item.uploadId : '',
    Delimiter: delimiter === '' ? undefined : encode(delimiter),
    Prefix: prefix === '' ? undefined : encode(prefix),
    MaxUploads: limit,
    EncodingType: encodingType,
    IsTruncated: page.isTruncated,
    Upload: itemsOf(page).map((upload) => uploadContent(upload, encode)),
    CommonPrefixes: commonPrefixes(commonPrefixesOf(page), encode),
  });
}

export interface CompletedPart {
  number: number;
  etag: string;
}

/** A part number as CompleteMultipartUpload lists it: digits, maybe surrounded by white space. */
const PART_NUMBER_TEXT = /^\s*\d{1,9}\s*$/;

/** Parts listed in a CompleteMultipartUpload body, ETags without quotes. */
export function parseCompleteMultipartUpload(xml: string): CompletedPart[] {
  const request = parseRequestDocument(xml, 'CompleteMultipartUpload', ['Part']);
  const parts = childElements(request, 'Part').map((part): CompletedPart => {
    const number = typeof part === 'string' ? undefined : childText(part, 'PartNumber');
    const etag = typeof part === 'string' ? undefined : childText(part, 'ETag');
    if (number === undefined || !PART_NUMBER_TEXT.test(number) || etag === undefined) throw new GatewayError(errors.malformedXml());
    return { number: Number(number), etag: etag.trim().replace(/"/g, '') };
  });
  if (parts.length === 0) throw new GatewayError(errors.malformedXml());
  return parts;
}

/**
 * Checks the part order, that every listed part was uploaded with that ETag, and S3's minimum
 * size of every part but the last.
 */
function checkCompletedParts(parts: readonly CompletedPart[], uploaded: readonly UploadedPart[]): void {
  let previous = 0;
  for (const part of parts) {
    if (part.number < 1 || part.number > 10000) {
      throw new GatewayError(errors.invalidArgument('Part number must be an integer between 1 and 10000, inclusive'));
    }
    if (part.number <= previous) throw new GatewayError(errors.invalidPartOrder());
    previous = part.number;
  }
  const byNumber = new Map(uploaded.map((part) => [part.number, part]));
  for (const part of parts) {
    if (byNumber.get(part.number)?.md5.toLowerCase() !== part.etag.toLowerCase()) throw new GatewayError(errors.invalidPart());
  }
  if (parts.slice(0, -1).some((part) => byNumber.get(part.number)!.size < MIN_PART_SIZE)) throw new GatewayError(errors.entityTooSmall());
}

/** S3's ETag of a multipart object (unquoted): the MD5 of the parts' binary MD5s, then `-<part count>`. */
function multipartEtag(parts: readonly CompletedPart[]): string {
  const digests = Buffer.concat(parts.map((part) => Buffer.from(part.etag, 'hex')));
  return `${createHash('md5').update(digests).digest('hex')}-${parts.length}`;
}

/**
 * s3rver streams the listed parts without checking they exist (a missing part crashes the
 * whole process: unhandled 'error' on a fs.ReadStream), and straight into the object file.
 * Check the upload, the part order and every part's ETag first; the storage then assembles the
 * object beside the store and puts it in place whole.
 */
export const completeMultipartUpload: OperationOverride = async (ctx) => {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  const uploadId = await requireUpload(ctx);
  const parts = parseCompleteMultipartUpload((await ctx.readBody(MAX_COMPLETE_BODY_BYTES)).toString('utf8'));
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  checkCompletedParts(parts, await ctx.storage.uploadedParts(bucket, uploadId));

  const etag = multipartEtag(parts);
  await ctx.storage.completeUpload(bucket, key, uploadId, parts.map((part) => part.number), etag);
  const location = `http://${ctx.exchange.req.headers.host ?? 'localhost'}${ctx.target.rawPath}`;
  sendXmlResult(ctx.exchange.res, 'CompleteMultipartUploadResult', {
    Location: location,
    Bucket: bucket,
    Key: key,
    ETag: JSON.stringify(etag),
  });
};
