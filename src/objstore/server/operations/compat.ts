/**
 * Operations the gateway handles itself, or checks before s3rver sees them, because s3rver
 * 3.7.1 gets them wrong. Each entry is keyed by the operation name from `classifyOperation`
 * and runs only after the request has been authenticated, authorised and validated; an
 * operation without an entry goes straight to s3rver. An `inBucket` entry first checks what S3
 * checks before it looks the bucket up (`() => answer` when there is nothing to check), and is
 * answered only in a bucket that exists (context.ts, Override).
 *
 * This is where further fixes belong: uploads in uploads.ts, multipart operations in
 * multipart.ts (CompleteMultipartUpload in complete-multipart.ts, UploadPartCopy in
 * upload-part-copy.ts, upload checksums in multipart-checksums.ts, part reads in
 * multipart-objects.ts), GetObjectAttributes in object-attributes.ts, listings in listing.ts,
 * buckets in buckets.ts, reads in object-reads.ts, deletes in delete-objects.ts, version ids in
 * versions.ts, conditions in conditional-operations.ts, PutObjectTagging in object-tagging.ts,
 * what they are given in context.ts. Browser form uploads
 * (post-object.ts) authenticate themselves, so the gateway calls them before this table.
 *
 * Every operation that acts on a request body reads it here, through receiveBody (uploads) or
 * ctx.readBody, which hold it against the payload hash signed (signed-payload.ts): none is left
 * for s3rver to read.
 */
import type { S3Operation } from '../../s3-operations.ts';
import { bucketOperations } from './buckets.ts';
import { completeMultipartUpload } from './complete-multipart.ts';
import { copyObject } from './conditional-operations.ts';
import type { Override } from './context.ts';
import { deleteObject, deleteObjects } from './delete-objects.ts';
import { listObjects, listObjectsV2, listObjectVersions } from './listing.ts';
import { abortMultipartUpload, listMultipartUploads, listParts } from './multipart.ts';
import { createMultipartUpload } from './multipart-checksums.ts';
import { readPartsBefore } from './multipart-objects.ts';
import { getObjectAttributes } from './object-attributes.ts';
import { readObject } from './object-reads.ts';
import { putObjectTagging } from './object-tagging.ts';
import { uploadPartCopy } from './upload-part-copy.ts';
import { putObject, uploadPart } from './uploads.ts';

export const operationOverrides: Readonly<Partial<Record<S3Operation, Override>>> = {
  PutObject: { inBucket: () => putObject },
  GetObject: { inBucket: readPartsBefore(readObject) },
  HeadObject: { inBucket: readPartsBefore(readObject) },
  CopyObject: { always: copyObject },
  GetObjectAttributes: { inBucket: getObjectAttributes },
  CreateMultipartUpload: { always: createMultipartUpload },
  UploadPart: { inBucket: () => uploadPart },
  UploadPartCopy: { inBucket: () => uploadPartCopy },
  CompleteMultipartUpload: { inBucket: () => completeMultipartUpload },
  AbortMultipartUpload: { inBucket: () => abortMultipartUpload },
  ListParts: { inBucket: listParts },
  ListMultipartUploads: { inBucket: listMultipartUploads },
  ListObjects: { inBucket: listObjects },
  ListObjectsV2: { inBucket: listObjectsV2 },
  ListObjectVersions: { inBucket: listObjectVersions },
  DeleteObject: { inBucket: deleteObject },
  DeleteObjects: { inBucket: () => deleteObjects },
  PutObjectTagging: { inBucket: () => putObjectTagging },
  ...bucketOperations,
};
