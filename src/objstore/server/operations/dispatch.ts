/**
 * Every S3 operation the gateway can name (classify.ts), with the handler that answers it: the one
 * place to look for who answers a request. Each runs once the request has been authenticated,
 * authorised and its names validated (gateway.ts); preflights and browser forms authenticate
 * otherwise (see their modules).
 *
 * `inBucket(answer)` answers NoSuchBucket first for a bucket that does not exist, as S3 answers
 * every operation on one; `checkedInBucket(start)` first refuses what S3 refuses before it looks
 * the bucket up (malformed parameters and headers). Operations on a bucket's configuration other
 * than its CORS rules are refused by classify.ts (AccessDenied) before they get here; what they
 * would answer is listed all the same.
 *
 * Every operation that acts on a request body reads it through receiveBody (uploads) or
 * ctx.readBody, which hold it against the payload hash signed (signed-payload.ts).
 */
import type { S3Operation } from '../../s3-operations.ts';
import { getBucketAcl, getObjectAcl } from './acl.ts';
import { deleteBucketCors, getBucketCors, optionsObject, putBucketCors } from './bucket-cors.ts';
import {
  createBucket,
  deleteBucket,
  getBucketLocation,
  getBucketVersioning,
  headBucket,
  listBuckets,
} from './buckets.ts';
import { completeMultipartUpload } from './complete-multipart.ts';
import { checkedInBucket, inBucket, type OperationHandler } from './context.ts';
import { copyObject } from './copy-object.ts';
import { deleteObject, deleteObjects } from './delete-objects.ts';
import { listObjects, listObjectsV2, listObjectVersions } from './listing.ts';
import { abortMultipartUpload, createMultipartUpload, listMultipartUploads, listParts } from './multipart.ts';
import { readPartsBefore } from './multipart-objects.ts';
import {
  missingObjectLock,
  noBucketLifecycle,
  noBucketPolicy,
  noBucketReplication,
  noBucketTagging,
  noBucketWebsite,
  noObjectLockConfiguration,
  notImplemented,
  unknownOperation,
} from './not-emulated.ts';
import { getObjectAttributes } from './object-attributes.ts';
import { readObject } from './object-reads.ts';
import { deleteObjectTagging, getObjectTagging, putObjectTagging } from './object-tagging.ts';
import { postObject } from './post-object.ts';
import { uploadPartCopy } from './upload-part-copy.ts';
import { putObject, uploadPart } from './uploads.ts';

/** Not emulated, in a bucket that exists. */
const notImplementedInBucket = inBucket(notImplemented);

export const OPERATION_HANDLERS: Readonly<Record<S3Operation, OperationHandler>> = {
  // The service
  ListBuckets: listBuckets,

  // Buckets (buckets.ts); DeleteBucket answers NoSuchBucket itself, after refusing a configured bucket
  CreateBucket: createBucket,
  DeleteBucket: deleteBucket,
  HeadBucket: inBucket(headBucket),
  GetBucketLocation: inBucket(getBucketLocation),
  GetBucketVersioning: inBucket(getBucketVersioning),
  GetBucketAcl: inBucket(getBucketAcl),

  // Listings (listing.ts, multipart.ts)
  ListObjects: checkedInBucket(listObjects),
  ListObjectsV2: checkedInBucket(listObjectsV2),
  ListObjectVersions: checkedInBucket(listObjectVersions),
  ListMultipartUploads: checkedInBucket(listMultipartUploads),

  // Objects
  PutObject: inBucket(putObject),
  PostObject: checkedInBucket(postObject),
  CopyObject: checkedInBucket(copyObject),
  GetObject: checkedInBucket(readPartsBefore(readObject)),
  HeadObject: checkedInBucket(readPartsBefore(readObject)),
  GetObjectAttributes: checkedInBucket(getObjectAttributes),
  DeleteObject: checkedInBucket(deleteObject),
  DeleteObjects: inBucket(deleteObjects),
  GetObjectAcl: inBucket(getObjectAcl),
  GetObjectTagging: inBucket(getObjectTagging),
  PutObjectTagging: inBucket(putObjectTagging),
  DeleteObjectTagging: inBucket(deleteObjectTagging),

  // Multipart uploads (multipart.ts, uploads.ts, upload-part-copy.ts, complete-multipart.ts)
  CreateMultipartUpload: checkedInBucket(createMultipartUpload),
  UploadPart: inBucket(uploadPart),
  UploadPartCopy: inBucket(uploadPartCopy),
  CompleteMultipartUpload: inBucket(completeMultipartUpload),
  AbortMultipartUpload: inBucket(abortMultipartUpload),
  ListParts: checkedInBucket(listParts),

  // CORS (bucket-cors.ts): a preflight is answered from the rules whether the bucket exists or not
  PutBucketCors: inBucket(putBucketCors),
  GetBucketCors: inBucket(getBucketCors),
  DeleteBucketCors: inBucket(deleteBucketCors),
  OptionsObject: optionsObject,

  // Configurations no bucket has (not-emulated.ts): S3's answer for a bucket without one
  GetBucketPolicy: inBucket(noBucketPolicy),
  GetBucketTagging: inBucket(noBucketTagging),
  GetBucketLifecycleConfiguration: inBucket(noBucketLifecycle),
  GetBucketWebsite: inBucket(noBucketWebsite),
  GetBucketReplication: inBucket(noBucketReplication),
  GetObjectLockConfiguration: inBucket(noObjectLockConfiguration),
  GetObjectRetention: inBucket(missingObjectLock),
  PutObjectRetention: inBucket(missingObjectLock),
  GetObjectLegalHold: inBucket(missingObjectLock),
  PutObjectLegalHold: inBucket(missingObjectLock),

  // Not emulated: 501 NotImplemented
  GetBucketAccelerateConfiguration: notImplementedInBucket,
  GetBucketAnalyticsConfiguration: notImplementedInBucket,
  GetBucketEncryption: notImplementedInBucket,
  GetBucketIntelligentTieringConfiguration: notImplementedInBucket,
  GetBucketInventoryConfiguration: notImplementedInBucket,
  GetBucketLogging: notImplementedInBucket,
  GetBucketMetricsConfiguration: notImplementedInBucket,
  GetBucketNotificationConfiguration: notImplementedInBucket,
  GetBucketOwnershipControls: notImplementedInBucket,
  GetBucketPolicyStatus: notImplementedInBucket,
  GetPublicAccessBlock: notImplementedInBucket,
  GetBucketRequestPayment: notImplementedInBucket,
  PutObjectAcl: notImplementedInBucket,
  GetObjectTorrent: notImplementedInBucket,
  SelectObjectContent: notImplementedInBucket,
  RestoreObject: notImplementedInBucket,

  // Refused by classify.ts: a bucket's configuration other than CORS cannot be set
  PutBucketAccelerateConfiguration: notImplementedInBucket,
  PutBucketAcl: notImplementedInBucket,
  PutBucketAnalyticsConfiguration: notImplementedInBucket,
  DeleteBucketAnalyticsConfiguration: notImplementedInBucket,
  PutBucketEncryption: notImplementedInBucket,
  DeleteBucketEncryption: notImplementedInBucket,
  PutBucketIntelligentTieringConfiguration: notImplementedInBucket,
  DeleteBucketIntelligentTieringConfiguration: notImplementedInBucket,
  PutBucketInventoryConfiguration: notImplementedInBucket,
  DeleteBucketInventoryConfiguration: notImplementedInBucket,
  PutBucketLifecycleConfiguration: notImplementedInBucket,
  DeleteBucketLifecycle: notImplementedInBucket,
  PutBucketLogging: notImplementedInBucket,
  PutBucketMetricsConfiguration: notImplementedInBucket,
  DeleteBucketMetricsConfiguration: notImplementedInBucket,
  PutBucketNotificationConfiguration: notImplementedInBucket,
  PutObjectLockConfiguration: notImplementedInBucket,
  PutBucketOwnershipControls: notImplementedInBucket,
  DeleteBucketOwnershipControls: notImplementedInBucket,
  PutBucketPolicy: notImplementedInBucket,
  DeleteBucketPolicy: notImplementedInBucket,
  PutPublicAccessBlock: notImplementedInBucket,
  DeletePublicAccessBlock: notImplementedInBucket,
  PutBucketReplication: notImplementedInBucket,
  DeleteBucketReplication: notImplementedInBucket,
  PutBucketRequestPayment: notImplementedInBucket,
  PutBucketTagging: notImplementedInBucket,
  DeleteBucketTagging: notImplementedInBucket,
  PutBucketVersioning: notImplementedInBucket,
  PutBucketWebsite: notImplementedInBucket,
  DeleteBucketWebsite: notImplementedInBucket,

  // What S3 has no name for: 405 MethodNotAllowed, or NotImplemented for a POST to an object
  Unknown: unknownOperation,
};
