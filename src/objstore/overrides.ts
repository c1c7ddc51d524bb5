/**
 * Every operation the gateway handles itself: compat.ts's fixes of s3rver, with the multipart
 * operations that behave exactly as S3 (UploadPartCopy, CompleteMultipartUpload's checksums and
 * repeats, part reads, GetObjectAttributes, upload checksums) and browser form uploads over them.
 */
import { completeMultipartUpload } from './complete-multipart.ts';
import { operationOverrides, type OperationOverride } from './compat.ts';
import { createMultipartUpload } from './multipart-checksums.ts';
import { readObjectPart } from './multipart-objects.ts';
import { getObjectAttributes } from './object-attributes.ts';
import { uploadPartCopy } from './upload-part-copy.ts';

const delegate: OperationOverride = async (ctx) => ctx.delegate();

/** A read with `?partNumber=` becomes a ranged read, served as the table beneath serves reads. */
const withPartNumbers =
  (serve: OperationOverride = delegate): OperationOverride =>
  (ctx) =>
    readObjectPart(ctx, serve);

export const allOperationOverrides: Readonly<Partial<Record<string, OperationOverride>>> = {
  ...operationOverrides,
  CreateMultipartUpload: createMultipartUpload,
  UploadPartCopy: uploadPartCopy,
  CompleteMultipartUpload: completeMultipartUpload,
  GetObject: withPartNumbers(operationOverrides['GetObject']),
  HeadObject: withPartNumbers(operationOverrides['HeadObject']),
  GetObjectAttributes: getObjectAttributes,
};
