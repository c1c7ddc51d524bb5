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

export const allOperationOverrides: Readonly<Partial<Record<string, OperationOverride>>> = {
  ...operationOverrides,
  CreateMultipartUpload: createMultipartUpload,
  UploadPartCopy: uploadPartCopy,
  CompleteMultipartUpload: completeMultipartUpload,
  GetObject: readObjectPart,
  HeadObject: readObjectPart,
  GetObjectAttributes: getObjectAttributes,
};
