/**
 * The multipart operations s3rver lacks (AbortMultipartUpload is a 405 there; it has no
 * ListParts or ListMultipartUploads), and what CompleteMultipartUpload needs to behave as S3
 * does: the minimum part size and S3's multipart ETag.
 *
 * s3rver keeps an upload in progress in `<bucket>/._S3rver_uploads/<uploadId>/`: a `key` file
 * (the key it was started for), a `metadata` file (the CreateMultipartUpload headers, as JSON),
 * and per part `<partNumber>` with its MD5 in `<partNumber>.md5`, written once the part is whole.
 */
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

import type { S3rverStore } from './backend.ts';
import {
  bucketExists,
  isMissingFile,
  readOptional,
  requireUpload,
  type CompletedPart,
  type OperationContext,
} from './compat.ts';
import { errors, GatewayError } from './errors.ts';
import {
  checksumElementName,
  readPartChecksum,
  readUploadChecksum,
  type PartChecksum,
  type UploadChecksum,
} from './multipart-checksums.ts';
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
import { accountXml, commonPrefixesXml, element, optionalElement, s3Timestamp, sendXmlResult } from './result-xml.ts';
import { singleParam } from './target.ts';

/** S3's minimum size of every part but the last. */
const MIN_PART_SIZE = 5 * 1024 * 1024;
/** The most parts (ListParts) or uploads (ListMultipartUploads) one page holds, and the default. */
const MAX_PER_PAGE = 1000;

interface UploadInProgress {
  key: string;
  uploadId: string;
  initiated: Date;
  storageClass: string;
  checksum: UploadChecksum | null;
}

interface UploadedPart {
  number: number;
  /** Quoted, as S3 writes it. */
  etag: string;
  size: number;
  lastModified: Date;
  checksum: PartChecksum | null;
}

async function statOptional(file: string): Promise<Stats | null> {
  try {
    return await stat(file);
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
}

async function readDirectoryNames(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (err) {
    if (isMissingFile(err)) return [];
    throw err;
  }
}

/** The CreateMultipartUpload headers s3rver kept for an upload; none when unreadable. */
function creationHeaders(metadataJson: string | null): Record<string, unknown> {
  try {
    return JSON.parse(metadataJson ?? '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** null for a directory that is not (or no longer) a whole upload. */
async function describeUpload(directory: string, uploadId: string): Promise<UploadInProgress | null> {
  const keyFile = path.join(directory, 'key');
  const [key, keyStats, metadata] = await Promise.all([
    readOptional(keyFile),
    statOptional(keyFile),
    readOptional(path.join(directory, 'metadata')),
  ]);
  if (key === null || keyStats === null) return null;
  const headers = creationHeaders(metadata);
  const storageClass = headers['x-amz-storage-class'];
  return {
    key,
    uploadId,
    initiated: keyStats.mtime,
    // STANDARD when none was named.
    storageClass: typeof storageClass === 'string' ? storageClass : 'STANDARD',
    checksum: readUploadChecksum(headers),
  };
}

/** The bucket's uploads in progress: by key, then by initiation (as S3 lists them). */
async function uploadsInProgress(store: S3rverStore, bucket: string): Promise<UploadInProgress[]> {
  const root = store.getResourcePath(bucket, undefined, 'uploads');
  const uploads = await Promise.all(
    (await readDirectoryNames(root)).map((uploadId) => describeUpload(path.join(root, uploadId), uploadId)),
  );
  return uploads
    .filter((upload): upload is UploadInProgress => upload !== null)
    .sort(
      (a, b) =>
        compareKeys(a.key, b.key) ||
        a.initiated.getTime() - b.initiated.getTime() ||
        compareKeys(a.uploadId, b.uploadId),
    );
}

/** The parts uploaded so far, by part number; a part still being written is not one yet. */
async function uploadedParts(directory: string): Promise<UploadedPart[]> {
  const numbers = (await readDirectoryNames(directory)).filter((name) => /^\d+$/.test(name));
  const parts = await Promise.all(
    numbers.map(async (name): Promise<UploadedPart | null> => {
      const file = path.join(directory, name);
      const [md5, stats, checksum] = await Promise.all([readOptional(`${file}.md5`), statOptional(file), readPartChecksum(file)]);
      if (md5 === null || stats === null) return null;
      return { number: Number(name), etag: JSON.stringify(md5.trim()), size: stats.size, lastModified: stats.mtime, checksum };
    }),
  );
  return parts.filter((part): part is UploadedPart => part !== null).sort((a, b) => a.number - b.number);
}

/** AbortMultipartUpload: 204, and the upload and its parts are gone. */
export async function abortMultipartUpload(ctx: OperationContext): Promise<void> {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  const { directory } = await requireUpload(ctx);
  await rm(directory, { recursive: true, force: true });
  const { res } = ctx.exchange;
  res.statusCode = 204;
  res.end();
}

/** An upload's checksum algorithm and type, as ListParts and ListMultipartUploads show them. */
function checksumXml(checksum: UploadChecksum | null): string {
  return checksum === null ? '' : element('ChecksumAlgorithm', checksum.algorithm) + element('ChecksumType', checksum.type);
}

function partXml(part: UploadedPart): string {
  return (
    '<Part>' +
    element('PartNumber', part.number) +
    element('LastModified', s3Timestamp(part.lastModified)) +
    element('ETag', part.etag) +
    element('Size', part.size) +
    (part.checksum === null ? '' : element(checksumElementName(part.checksum.algorithm), part.checksum.value)) +
    '</Part>'
  );
}

/** ListParts, paged by `part-number-marker`. */
export async function listParts(ctx: OperationContext): Promise<void> {
  const { query } = ctx.target;
  const maxParts = parseIntegerParam(query, 'max-parts', MAX_PER_PAGE);
  const marker = parseIntegerParam(query, 'part-number-marker', 0);
  if (!(await bucketExists(ctx))) return ctx.delegate();

  const { uploadId, directory } = await requireUpload(ctx);
  requireNonNegative(maxParts, 'max-parts');
  requireNonNegative(marker, 'part-number-marker');
  const limit = Math.min(maxParts, MAX_PER_PAGE);
  const [upload, parts] = await Promise.all([describeUpload(directory, uploadId), uploadedParts(directory)]);
  if (upload === null) throw new GatewayError(errors.noSuchUpload());
  const remaining = parts.filter((part) => part.number > marker);
  const page = remaining.slice(0, limit);
  sendXmlResult(
    ctx.exchange.res,
    'ListPartsResult',
    element('Bucket', ctx.target.bucket!) +
      element('Key', upload.key) +
      element('UploadId', uploadId) +
      accountXml('Initiator') +
      accountXml('Owner') +
      element('StorageClass', upload.storageClass) +
      checksumXml(upload.checksum) +
      element('PartNumberMarker', marker) +
      // As S3: the last part listed, 0 on an empty page, and there also when the list is complete
      // (so clients must stop on IsTruncated, not on a missing marker).
      element('NextPartNumberMarker', page.at(-1)?.number ?? 0) +
      element('MaxParts', limit) +
      element('IsTruncated', remaining.length > page.length && limit > 0) +
      page.map(partXml).join(''),
  );
}

function uploadXml(upload: UploadInProgress, encode: NameEncoder): string {
  return (
    '<Upload>' +
    element('Key', encode(upload.key)) +
    element('UploadId', upload.uploadId) +
    accountXml('Initiator') +
    accountXml('Owner') +
    element('StorageClass', upload.storageClass) +
    element('Initiated', s3Timestamp(upload.initiated)) +
    checksumXml(upload.checksum) +
    '</Upload>'
  );
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

  let uploads = await uploadsInProgress(ctx.backend.store, bucket);
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
  sendXmlResult(
    ctx.exchange.res,
    'ListMultipartUploadsResult',
    element('Bucket', bucket) +
      element('KeyMarker', encode(keyMarker)) +
      element('UploadIdMarker', uploadIdMarker) +
      element('NextKeyMarker', last ? encode(last.name) : '') +
      element('NextUploadIdMarker', last?.kind === 'item' ? last.item.uploadId : '') +
      optionalElement('Delimiter', delimiter === '' ? undefined : encode(delimiter)) +
      optionalElement('Prefix', prefix === '' ? undefined : encode(prefix)) +
      element('MaxUploads', limit) +
      optionalElement('EncodingType', encodingType) +
      element('IsTruncated', page.isTruncated) +
      itemsOf(page)
        .map((upload) => uploadXml(upload, encode))
        .join('') +
      commonPrefixesXml(commonPrefixesOf(page), encode),
  );
}

/**
 * S3 refuses to complete an upload in which a part other than the last is smaller than 5 MiB.
 * Answers the sizes of the parts.
 */
export async function requireMinimumPartSizes(directory: string, parts: readonly CompletedPart[]): Promise<number[]> {
  const sizes = await Promise.all(parts.map(async (part) => (await stat(path.join(directory, String(part.number)))).size));
  if (sizes.slice(0, -1).some((size) => size < MIN_PART_SIZE)) throw new GatewayError(errors.entityTooSmall());
  return sizes;
}

/** S3's ETag of a multipart object (unquoted): the MD5 of the parts' binary MD5s, then `-<part count>`. */
export function multipartEtag(parts: readonly CompletedPart[]): string {
  const digests = Buffer.concat(parts.map((part) => Buffer.from(part.etag, 'hex')));
  return `${createHash('md5').update(digests).digest('hex')}-${parts.length}`;
}
