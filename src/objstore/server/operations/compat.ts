/**
 * Operations the gateway handles itself, or checks before s3rver sees them, because s3rver
 * 3.7.1 gets them wrong. Each entry is keyed by the operation name from `classifyOperation`
 * and runs only after the request has been authenticated, authorised and validated; an
 * operation without an entry goes straight to s3rver.
 *
 * This is where further fixes belong: uploads in uploads.ts, multipart operations in
 * multipart.ts, listings in listing.ts, buckets in buckets.ts, reads in object-reads.ts, conditions in
 * conditional-operations.ts, what they are given in context.ts.
 */
import { bucketOperations } from './buckets.ts';
import { copyObject } from './conditional-operations.ts';
import type { OperationOverride } from './context.ts';
import { deleteObjects } from './delete-objects.ts';
import { listObjects, listObjectsV2 } from './listing.ts';
import { abortMultipartUpload, completeMultipartUpload, listMultipartUploads, listParts } from './multipart.ts';
import { readObject } from './object-reads.ts';
import { putObject, uploadPart } from './uploads.ts';

export const operationOverrides: Readonly<Partial<Record<string, OperationOverride>>> = {
  PutObject: putObject,
  GetObject: readObject,
  HeadObject: readObject,
  CopyObject: copyObject,
  UploadPart: uploadPart,
  CompleteMultipartUpload: completeMultipartUpload,
  AbortMultipartUpload: abortMultipartUpload,
  ListParts: listParts,
  ListMultipartUploads: listMultipartUploads,
  ListObjects: listObjects,
  ListObjectsV2: listObjectsV2,
  DeleteObjects: deleteObjects,
  ...bucketOperations,
};
