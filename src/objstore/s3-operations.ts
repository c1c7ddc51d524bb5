/**
 * The names of S3's operations, as the gateway classifies requests (server/classify.ts), answers
 * them (server/operations/dispatch.ts, one handler each) and the journal records them.
 */

/** An operation selected by a subresource query parameter, by the request's method. */
type ByMethod = Readonly<Partial<Record<'GET' | 'PUT' | 'DELETE' | 'POST', string>>>;

/**
 * Query parameters that select a different operation on a bucket, each with the operations S3
 * has for it (`?acl` is GetBucketAcl and PutBucketAcl; there is no DeleteBucketAcl).
 */
export const BUCKET_SUBRESOURCES = {
  accelerate: { GET: 'GetBucketAccelerateConfiguration', PUT: 'PutBucketAccelerateConfiguration' },
  acl: { GET: 'GetBucketAcl', PUT: 'PutBucketAcl' },
  analytics: {
    GET: 'GetBucketAnalyticsConfiguration',
    PUT: 'PutBucketAnalyticsConfiguration',
    DELETE: 'DeleteBucketAnalyticsConfiguration',
  },
  cors: { GET: 'GetBucketCors', PUT: 'PutBucketCors', DELETE: 'DeleteBucketCors' },
  delete: { POST: 'DeleteObjects' },
  encryption: { GET: 'GetBucketEncryption', PUT: 'PutBucketEncryption', DELETE: 'DeleteBucketEncryption' },
  'intelligent-tiering': {
    GET: 'GetBucketIntelligentTieringConfiguration',
    PUT: 'PutBucketIntelligentTieringConfiguration',
    DELETE: 'DeleteBucketIntelligentTieringConfiguration',
  },
  inventory: {
    GET: 'GetBucketInventoryConfiguration',
    PUT: 'PutBucketInventoryConfiguration',
    DELETE: 'DeleteBucketInventoryConfiguration',
  },
  lifecycle: {
    GET: 'GetBucketLifecycleConfiguration',
    PUT: 'PutBucketLifecycleConfiguration',
    DELETE: 'DeleteBucketLifecycle',
  },
  location: { GET: 'GetBucketLocation' },
  logging: { GET: 'GetBucketLogging', PUT: 'PutBucketLogging' },
  metrics: {
    GET: 'GetBucketMetricsConfiguration',
    PUT: 'PutBucketMetricsConfiguration',
    DELETE: 'DeleteBucketMetricsConfiguration',
  },
  notification: { GET: 'GetBucketNotificationConfiguration', PUT: 'PutBucketNotificationConfiguration' },
  'object-lock': { GET: 'GetObjectLockConfiguration', PUT: 'PutObjectLockConfiguration' },
  ownershipControls: {
    GET: 'GetBucketOwnershipControls',
    PUT: 'PutBucketOwnershipControls',
    DELETE: 'DeleteBucketOwnershipControls',
  },
  policy: { GET: 'GetBucketPolicy', PUT: 'PutBucketPolicy', DELETE: 'DeleteBucketPolicy' },
  policyStatus: { GET: 'GetBucketPolicyStatus' },
  publicAccessBlock: { GET: 'GetPublicAccessBlock', PUT: 'PutPublicAccessBlock', DELETE: 'DeletePublicAccessBlock' },
  replication: { GET: 'GetBucketReplication', PUT: 'PutBucketReplication', DELETE: 'DeleteBucketReplication' },
  requestPayment: { GET: 'GetBucketRequestPayment', PUT: 'PutBucketRequestPayment' },
  tagging: { GET: 'GetBucketTagging', PUT: 'PutBucketTagging', DELETE: 'DeleteBucketTagging' },
  uploads: { GET: 'ListMultipartUploads' },
  versioning: { GET: 'GetBucketVersioning', PUT: 'PutBucketVersioning' },
  versions: { GET: 'ListObjectVersions' },
  website: { GET: 'GetBucketWebsite', PUT: 'PutBucketWebsite', DELETE: 'DeleteBucketWebsite' },
} as const satisfies Record<string, ByMethod>;
export type BucketSubresource = keyof typeof BUCKET_SUBRESOURCES;

/**
 * Query parameters that select a different operation on an object, each with the operations S3
 * has for it. Every bucket subresource on an object is taken for a subresource too (an operation
 * S3 does not have), as clients were answered when s3rver routed object requests on the union
 * of its bucket and object lists.
 */
export const OBJECT_SUBRESOURCES = {
  acl: { GET: 'GetObjectAcl', PUT: 'PutObjectAcl' },
  attributes: { GET: 'GetObjectAttributes' },
  'legal-hold': { GET: 'GetObjectLegalHold', PUT: 'PutObjectLegalHold' },
  restore: { POST: 'RestoreObject' },
  retention: { GET: 'GetObjectRetention', PUT: 'PutObjectRetention' },
  select: { POST: 'SelectObjectContent' },
  tagging: { GET: 'GetObjectTagging', PUT: 'PutObjectTagging', DELETE: 'DeleteObjectTagging' },
  torrent: { GET: 'GetObjectTorrent' },
  uploadId: { GET: 'ListParts', PUT: 'UploadPart', POST: 'CompleteMultipartUpload', DELETE: 'AbortMultipartUpload' },
  uploads: { POST: 'CreateMultipartUpload' },
} as const satisfies Record<string, ByMethod>;
export type ObjectSubresource = keyof typeof OBJECT_SUBRESOURCES;

/** The operations not selected by a subresource. */
export const NAMED_OPERATIONS = [
  'ListBuckets',
  'CreateBucket',
  'DeleteBucket',
  'HeadBucket',
  'ListObjects',
  'ListObjectsV2',
  'PostObject',
  'GetObject',
  'HeadObject',
  'PutObject',
  'CopyObject',
  'DeleteObject',
  'UploadPartCopy',
  /** A CORS preflight (S3's "OPTIONS object"), of a bucket or an object. */
  'OptionsObject',
  /** A combination S3 has no name for. */
  'Unknown',
] as const;

type OperationsOf<Table> = { [Name in keyof Table]: Table[Name][keyof Table[Name]] }[keyof Table];

/** An S3 operation name, e.g. `PutObject` or `GetBucketAcl`. */
export type S3Operation =
  | (typeof NAMED_OPERATIONS)[number]
  | OperationsOf<typeof BUCKET_SUBRESOURCES>
  | OperationsOf<typeof OBJECT_SUBRESOURCES>;
