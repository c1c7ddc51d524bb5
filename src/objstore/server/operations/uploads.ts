/**
 * PutObject and UploadPart (and the admin API's upload, putObjectContent), stored only after the
 * body has been received and verified in full (see body.ts): the storage puts the object (or
 * part) in place whole, so it is never visible with bytes that failed a check, nor half-written.
 *
 * An object's checksum is kept in its stored metadata (`x-amz-checksum-<algorithm>`,
 * `x-amz-checksum-type`); object-reads.ts adds it to GetObject / HeadObject responses that ask
 * for it. Copies keep it along with the bytes (copy-object.ts).
 */
import type { Readable } from 'node:stream';

import { planBody, receiveBody, receiveContent, storedContentEncoding, type ReceivedBody } from '../bodies/body.ts';
import { checksumHeaderName, DEFAULT_CHECKSUM_ALGORITHM } from '../../checksum-algorithms.ts';
import { objectChecksumHeaders } from '../bodies/checksums.ts';
import { validateObjectKey, validatePartNumber, singleParam } from '../target.ts';
import type { ObjstoreStorage, PlacementGuard } from '../../storage/storage.ts';
import { placeUnderWriteConditions, requireWriteConditionsMet } from './conditional-operations.ts';
import { requireUpload, type OperationContext, type OperationHandler } from './context.ts';
import { requirePartChecksum, uploadChecksumOf } from './multipart-checksums.ts';
import { storedHeaders } from './stored-headers.ts';

function respondStored(ctx: OperationContext, md5: string, headers: Record<string, string>): void {
  const { res } = ctx.exchange;
  res.statusCode = 200;
  res.setHeader('ETag', JSON.stringify(md5));
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', 0);
  res.end();
}

/** PutObject: the body decoded (aws-chunked framing removed) and its digests checked before the object is placed. */
export const putObject: OperationHandler = async (ctx) => {
  await requireWriteConditionsMet(ctx);
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  const { req } = ctx.exchange;
  const plan = planBody(req.headers, ctx.payloadHash);
  const metadata = storedHeaders(ctx, {
    ...req.headers,
    'content-encoding': storedContentEncoding(req.headers['content-encoding']),
  });
  const body = await receiveBody(ctx, plan, DEFAULT_CHECKSUM_ALGORITHM);
  const checksum = await placeReceived(ctx.storage, bucket, key, body, metadata, (place) =>
    placeUnderWriteConditions(ctx, place),
  );
  respondStored(ctx, body.md5, checksum);
};

/** Places a received body as the object, its checksum kept with its metadata; gives the checksum's headers. */
async function placeReceived(
  storage: ObjstoreStorage,
  bucket: string,
  key: string,
  body: ReceivedBody,
  metadata: Readonly<Record<string, string>>,
  placing?: PlacementGuard,
): Promise<Record<string, string>> {
  const checksum = body.checksum ? objectChecksumHeaders(body.checksum.algorithm, body.checksum.value) : {};
  await storage.placeObject(bucket, key, body.content, body.md5, { ...metadata, ...checksum }, placing);
  return checksum;
}

/**
 * Stores `source` as the object as PutObject does (a plain body of `length` bytes, or of a size shown at its end, with
 * the request headers given): same metadata, ETag and checksum, the storage's limits applying. Throws the S3 error a
 * PutObject would answer.
 */
export async function putObjectContent(
  storage: ObjstoreStorage,
  bucket: string,
  key: string,
  source: Readable,
  length: number | null,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  validateObjectKey(key);
  const metadata = storage.storedMetadata(bucket, key, headers);
  const body = await receiveContent(storage, source, length, DEFAULT_CHECKSUM_ALGORITHM);
  await placeReceived(storage, bucket, key, body, metadata);
}

/** UploadPart into an upload in progress, with the checksum the upload asks for (multipart-checksums.ts). */
export const uploadPart: OperationHandler = async (ctx) => {
  const uploadId = await requireUpload(ctx);
  const partNumber = validatePartNumber(singleParam(ctx.target.query, 'partNumber'));
  const plan = planBody(ctx.exchange.req.headers, ctx.payloadHash);
  requirePartChecksum(await uploadChecksumOf(ctx, uploadId), plan.checksum);
  const body = await receiveBody(ctx, plan, null);
  await ctx.storage.placePart(ctx.target.bucket!, uploadId, partNumber, body.content, body.md5, body.checksum);
  respondStored(
    ctx,
    body.md5,
    body.checksum ? { [checksumHeaderName(body.checksum.algorithm)]: body.checksum.value } : {},
  );
};
