/**
 * CompleteMultipartUpload as S3 does it. s3rver streams the listed parts without checking they
 * exist (a missing part crashes the whole process: unhandled 'error' on a fs.ReadStream), and
 * straight into the object file. Here the upload, the part order, every part's ETag and
 * checksum and the part sizes are checked first, then the object is assembled beside the store
 * and renamed into place (uploads.ts) with its checksum and the layout of its parts
 * (multipart-objects.ts).
 *
 * S3 answers a CompleteMultipartUpload repeated after success with the same result: a completed
 * upload leaves a record (`completed` in its directory, whose `key` file is gone so it is no
 * longer in progress), answered to a request that lists the same parts again.
 */
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm } from './checksums.ts';
import { bucketExists, readOptional, requireUpload, type CompletedPart, type OperationOverride, type OperationContext } from './compat.ts';
import { errors, GatewayError } from './errors.ts';
import { multipartEtag, requireMinimumPartSizes } from './multipart.ts';
import {
  checksumElementName,
  compositeChecksum,
  fullObjectAlgorithm,
  readPartChecksum,
  requireListedPartChecksum,
  storedObjectChecksum,
  uploadChecksumOf,
  type ChecksumType,
  type ListedPartChecksums,
  type UploadChecksum,
} from './multipart-checksums.ts';
import { layoutMetadata, type ObjectPart } from './multipart-objects.ts';
import { element, sendXmlResult } from './result-xml.ts';
import { singleParam, validateUploadId } from './target.ts';
import { storeMultipartObject } from './uploads.ts';
import { decodeXmlText } from './xml-text.ts';

export interface ListedPart extends CompletedPart {
  checksums: ListedPartChecksums;
}

/** Parts listed in a CompleteMultipartUpload body, ETags without quotes. */
export function parseCompleteMultipartUpload(xml: string): ListedPart[] {
  if (!/<CompleteMultipartUpload[\s>]/.test(xml) || !/<\/CompleteMultipartUpload>/.test(xml)) {
    throw new GatewayError(errors.malformedXml());
  }
  const parts: ListedPart[] = [];
  for (const match of xml.matchAll(/<Part(?:\s[^>]*)?>([\s\S]*?)<\/Part>/g)) {
    const body = match[1]!;
    const number = /<PartNumber>\s*(\d{1,9})\s*<\/PartNumber>/.exec(body)?.[1];
    const etag = /<ETag>([\s\S]*?)<\/ETag>/.exec(body)?.[1];
    if (number === undefined || etag === undefined) throw new GatewayError(errors.malformedXml());
    const checksums: ListedPartChecksums = {};
    for (const algorithm of CHECKSUM_ALGORITHMS) {
      const name = checksumElementName(algorithm);
      const value = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(body)?.[1];
      if (value !== undefined) checksums[algorithm] = decodeXmlText(value).trim();
    }
    parts.push({ number: Number(number), etag: decodeXmlText(etag).trim().replace(/"/g, ''), checksums });
  }
  if (parts.length === 0) throw new GatewayError(errors.malformedXml());
  return parts;
}

/** What a completed upload answers, again to a repeated request. */
interface CompletedUpload {
  key: string;
  /** The parts it was completed with, for recognising a repeated request. */
  parts: CompletedPart[];
  etag: string;
  checksum: { algorithm: ChecksumAlgorithm; value: string; type: ChecksumType };
}

const COMPLETED_FILE = 'completed';
const MAX_COMPLETE_BODY_BYTES = 4 * 1024 * 1024;

const sameParts = (a: readonly CompletedPart[], b: readonly CompletedPart[]) =>
  a.length === b.length && a.every((part, index) => part.number === b[index]!.number && part.etag === b[index]!.etag);

/** The upload's record, when this very key was completed with exactly these parts. */
async function completedBefore(ctx: OperationContext, parts: readonly CompletedPart[]): Promise<CompletedUpload | null> {
  const uploadId = validateUploadId(singleParam(ctx.target.query, 'uploadId'));
  const stored = await readOptional(path.join(ctx.backend.uploadDirectory(ctx.target.bucket!, uploadId), COMPLETED_FILE));
  if (stored === null) return null;
  const completed = JSON.parse(stored) as CompletedUpload;
  const listed = parts.map(({ number, etag }) => ({ number, etag }));
  return completed.key === ctx.target.key && sameParts(completed.parts, listed) ? completed : null;
}

/** Leaves only the record of a completed upload in its directory (the `key` file first: it is no longer in progress). */
async function retireUpload(directory: string, completed: CompletedUpload): Promise<void> {
  await writeFile(path.join(directory, COMPLETED_FILE), JSON.stringify(completed));
  await rm(path.join(directory, 'key'), { force: true });
  const leftovers = (await readdir(directory)).filter((name) => name !== COMPLETED_FILE);
  await Promise.all(leftovers.map((name) => rm(path.join(directory, name), { recursive: true, force: true })));
}

/** The upload in progress the request names; null when there is none (perhaps no longer). */
async function uploadInProgress(ctx: OperationContext): Promise<{ directory: string } | null> {
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
      throw new GatewayError(errors.invalidArgument('Part number must be an integer between 1 and 10000, inclusive'));
    }
    // S3 refuses a part listed twice as it refuses parts out of order.
    if (part.number <= previous) throw new GatewayError(errors.invalidPartOrder());
    previous = part.number;
  }
}

/** Checks every listed part against the part uploaded under its number; answers the object's parts. */
async function checkListedParts(directory: string, upload: UploadChecksum | null, parts: readonly ListedPart[]): Promise<ObjectPart[]> {
  const objectParts: ObjectPart[] = [];
  for (const part of parts) {
    const file = path.join(directory, String(part.number));
    const md5 = await readOptional(`${file}.md5`);
    if (md5 === null || md5.trim().toLowerCase() !== part.etag.toLowerCase()) throw new GatewayError(errors.invalidPart());
    const stored = await readPartChecksum(file);
    requireListedPartChecksum(upload, part.number, part.checksums, stored);
    objectParts.push({ number: part.number, size: 0, checksum: upload === null ? null : stored!.value });
  }
  return objectParts;
}

function sendCompleted(ctx: OperationContext, completed: CompletedUpload): void {
  const location = `http://${ctx.exchange.req.headers.host ?? 'localhost'}${ctx.target.rawPath}`;
  const { checksum } = completed;
  sendXmlResult(
    ctx.exchange.res,
    'CompleteMultipartUploadResult',
    element('Location', location) +
      element('Bucket', ctx.target.bucket!) +
      element('Key', completed.key) +
      element('ETag', JSON.stringify(completed.etag)) +
      element(checksumElementName(checksum.algorithm), checksum.value) +
      element('ChecksumType', checksum.type),
  );
}

export const completeMultipartUpload: OperationOverride = async (ctx) => {
  if (!(await bucketExists(ctx))) return ctx.delegate();
  const inProgress = await uploadInProgress(ctx);
  const parts = parseCompleteMultipartUpload((await ctx.readBody(MAX_COMPLETE_BODY_BYTES)).toString('utf8'));
  if (inProgress === null) {
    const repeated = await completedBefore(ctx, parts);
    if (repeated === null) throw new GatewayError(errors.noSuchUpload());
    return sendCompleted(ctx, repeated);
  }
  const { directory } = inProgress;
  requireAscendingParts(parts);
  const upload = await uploadChecksumOf(directory);
  const objectParts = await checkListedParts(directory, upload, parts);
  const sizes = await requireMinimumPartSizes(directory, parts);
  objectParts.forEach((part, index) => (part.size = sizes[index]!));

  const etag = multipartEtag(parts);
  const composite =
    upload?.type === 'COMPOSITE' ? await compositeChecksum(upload.algorithm, objectParts.map((part) => part.checksum!)) : null;
  const wholeAlgorithm = fullObjectAlgorithm(upload);
  const fullObject = await storeMultipartObject(ctx, directory, parts, {
    etag,
    checksumAlgorithm: wholeAlgorithm,
    metadata: (value) => ({
      ...layoutMetadata({ parts: objectParts, checksum: upload }),
      ...(composite !== null ? storedObjectChecksum(upload!.algorithm, composite, 'COMPOSITE') : {}),
      ...(value !== null ? storedObjectChecksum(wholeAlgorithm!, value, 'FULL_OBJECT') : {}),
    }),
  });
  const checksum =
    composite !== null
      ? { algorithm: upload!.algorithm, value: composite, type: 'COMPOSITE' as const }
      : { algorithm: wholeAlgorithm!, value: fullObject!, type: 'FULL_OBJECT' as const };
  const completed: CompletedUpload = { key: ctx.target.key!, parts: parts.map(({ number, etag: partEtag }) => ({ number, etag: partEtag })), etag, checksum };
  await retireUpload(directory, completed);
  sendCompleted(ctx, completed);
};
