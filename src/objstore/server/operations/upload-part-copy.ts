/**
 * UploadPartCopy: a part of an upload in progress copied from an
 * existing object (`?versionId=null` after the source names its one version), whole or the
 * byte range `x-amz-copy-source-range: bytes=first-last` names,
 * answered with S3's CopyPartResult. The key needs `get` besides `multipart` (operations.ts),
 * so a source it may not read is AccessDenied before anything here runs.
 */
import { createHash } from 'node:crypto';

import { receiveStream } from '../../storage/storage.ts';
import { startChecksum } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { parseCopySource, singleParam, validatePartNumber } from '../target.ts';
import { sendXmlResult } from '../xml.ts';
import { requireCopySourceConditionsMet } from './conditional-operations.ts';
import { requireUpload, type OperationHandler } from './context.ts';
import { checksumElementName, uploadChecksumOf } from './multipart-checksums.ts';
import { s3Timestamp } from './result-xml.ts';
import { requireNullVersion } from './versions.ts';

const RANGE_HEADER = 'x-amz-copy-source-range';

/** The inclusive byte range to copy from a source of `size` bytes: all of it without the header. */
export function parseCopySourceRange(value: string | undefined, size: number): { start: number; end: number } | null {
  if (value === undefined) return null;
  const match = /^bytes=(\d+)-(\d+)$/.exec(value);
  const start = Number(match?.[1]);
  const end = Number(match?.[2]);
  if (match === null || start > end) throw new GatewayError(errors.malformedCopyRange(value));
  if (start >= size) throw new GatewayError(errors.copyRangeStartsPastSource());
  if (end >= size) throw new GatewayError(errors.copyRangeEndsPastSource(value, size));
  return { start, end };
}

export const uploadPartCopy: OperationHandler = async (ctx) => {
  const uploadId = await requireUpload(ctx);
  const partNumber = validatePartNumber(singleParam(ctx.target.query, 'partNumber'));
  const { req } = ctx.exchange;
  const source = parseCopySource(req.headers)!;
  requireNullVersion('x-amz-copy-source', source.versionId);
  const { storage } = ctx;
  if (!(await storage.bucketExists(source.bucket))) throw new GatewayError(errors.noSuchBucket(source.bucket));
  const head = await storage.headObject(source.bucket, source.key);
  if (head === null) throw new GatewayError(errors.noSuchKey(source.key));
  await requireCopySourceConditionsMet(ctx);
  const rangeHeader = req.headers[RANGE_HEADER];
  const range = parseCopySourceRange(
    Array.isArray(rangeHeader) ? rangeHeader.join(',') : rangeHeader,
    Number(head['content-length']),
  );

  const upload = await uploadChecksumOf(ctx, uploadId);
  const md5 = createHash('md5');
  const checksum = upload === null ? null : startChecksum(upload.algorithm);
  async function* hashed(bytes: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    for await (const data of bytes) {
      md5.update(data);
      checksum?.update(data);
      yield data;
    }
  }
  const content = await receiveStream(storage, hashed(storage.readObject(source.bucket, source.key, range)));
  const etag = md5.digest('hex');
  const partChecksum = checksum === null ? null : { algorithm: upload!.algorithm, value: await checksum.digest() };
  const bucket = ctx.target.bucket!;
  await storage.placePart(bucket, uploadId, partNumber, content, etag, partChecksum);

  const [placed] = (await storage.uploadedParts(bucket, uploadId, { after: partNumber - 1, limit: 1 })).filter(
    (part) => part.number === partNumber,
  );
  sendXmlResult(ctx.exchange.res, 'CopyPartResult', {
    LastModified: s3Timestamp(placed?.lastModified ?? new Date()),
    ETag: JSON.stringify(etag),
    ...(partChecksum === null ? {} : { [checksumElementName(partChecksum.algorithm)]: partChecksum.value }),
  });
};
