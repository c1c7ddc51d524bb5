/**
 * The names of S3's operations, as the gateway classifies requests (server/classify.ts) and the
 * journal records them.
 */

/**
 * Query parameters that select a different operation on a bucket, each with the noun of its
 * operations (`?acl` is GetBucketAcl, PutBucketAcl, DeleteBucketAcl).
 */
export const BUCKET_SUBRESOURCES = {
  accelerate: 'BucketAccelerateConfiguration',
  acl: 'BucketAcl',
  analytics: 'BucketAnalyticsConfiguration',
  cors: 'BucketCors',
  delete: 'Objects',
  encryption: 'BucketEncryption',
  'intelligent-tiering': 'BucketIntelligentTieringConfiguration',
  inventory: 'BucketInventoryConfiguration',
  lifecycle: 'BucketLifecycleConfiguration',
  location: 'BucketLocation',
  logging: 'BucketLogging',
  metrics: 'BucketMetricsConfiguration',
  notification: 'BucketNotificationConfiguration',
  'object-lock': 'ObjectLockConfiguration',
  ownershipControls: 'BucketOwnershipControls',
  policy: 'BucketPolicy',
  policyStatus: 'BucketPolicyStatus',
  publicAccessBlock: 'PublicAccessBlock',
  replication: 'BucketReplication',
  requestPayment: 'BucketRequestPayment',
  tagging: 'BucketTagging',
  uploads: 'MultipartUploads',
  versioning: 'BucketVersioning',
  versions: 'ObjectVersions',
  website: 'BucketWebsite',
} as const;
export type BucketSubresource = keyof typeof BUCKET_SUBRESOURCES;

/** The nouns of the operations on an object's subresources, by the query parameter that selects one. */
export const OBJECT_SUBRESOURCE_NOUNS = {
  acl: 'ObjectAcl',
  attributes: 'ObjectAttributes',
  'legal-hold': 'ObjectLegalHold',
  retention: 'ObjectRetention',
  tagging: 'ObjectTagging',
  torrent: 'ObjectTorrent',
} as const;
export type ObjectSubresource = keyof typeof OBJECT_SUBRESOURCE_NOUNS;

/** The operations whose names are not a verb before a subresource's noun. */
export const NAMED_OPERATIONS = [
  'ListBuckets',
  'CreateBucket',
  'DeleteBucket',
  'HeadBucket',
  'ListObjects',
  'ListObjectsV2',
  'ListObjectVersions',
  'ListMultipartUploads',
  'DeleteObjects',
  'PostObject',
  'GetObject',
  'HeadObject',
  'PutObject',
  'CopyObject',
  'DeleteObject',
  'CreateMultipartUpload',
  'UploadPart',
  'UploadPartCopy',
  'CompleteMultipartUpload',
  'AbortMultipartUpload',
  'ListParts',
  'SelectObjectContent',
  'RestoreObject',
  /** A combination S3 has no name for. */
  'Unknown',
] as const;

type SubresourceNoun = (typeof BUCKET_SUBRESOURCES)[BucketSubresource] | (typeof OBJECT_SUBRESOURCE_NOUNS)[ObjectSubresource];

/** An S3 operation name, e.g. `PutObject` or `GetBucketAcl`. */
export type S3Operation = (typeof NAMED_OPERATIONS)[number] | `${'Get' | 'Put' | 'Delete'}${SubresourceNoun}`;
