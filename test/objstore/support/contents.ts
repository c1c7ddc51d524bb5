/**
 * What an objstore answers about everything it holds, read through the S3 API with the AWS SDK:
 * every bucket's listing, uploads in progress and their parts, and each object's HeadObject,
 * GetObject (its bytes as a SHA-256), parts and tags; a bucket's CORS rules. Two stores holding
 * the same objects answer the same document (test/objstore/data/1182b23 keeps one).
 *
 * Plain data only (no vitest), so the script that made that test data reads a store with it too.
 */
import { createHash } from 'node:crypto';
import {
  GetBucketCorsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
} from '@aws-sdk/client-s3';

export interface ObjstoreCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export function s3ClientAt(endpoint: string, credentials: ObjstoreCredentials): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

type Json = null | boolean | number | string | Json[] | { [name: string]: Json };

/** An SDK answer as JSON: without `$metadata` (request ids) and the body stream; dates as ISO strings. */
function plain(value: unknown): Json {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(
      ([name, field]) => name !== '$metadata' && name !== 'Body' && field !== undefined,
    );
    return Object.fromEntries(
      entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, field]) => [name, plain(field)]),
    );
  }
  return value as Json;
}

async function errorCodeOf(send: Promise<unknown>): Promise<Json> {
  try {
    return plain(await send);
  } catch (error) {
    return { error: (error as { name?: string }).name ?? String(error) };
  }
}

export interface CapturedObject {
  head: Json;
  get: Json;
  sha256: string;
  bytes: number;
  tags: Json;
  /** HeadObject of each part, for an object CompleteMultipartUpload made. */
  parts?: Json[];
}

export interface CapturedBucket {
  listing: Json[];
  uploads: Json[];
  /** ListParts of each upload in progress, by upload id. */
  parts: Record<string, Json>;
  cors: Json;
  objects: Record<string, CapturedObject>;
}

export type CapturedStore = Record<string, CapturedBucket>;

async function captureObject(s3: S3Client, bucket: string, key: string): Promise<CapturedObject> {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
  const body = Buffer.from(await got.Body!.transformToByteArray());
  const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
  const captured: CapturedObject = {
    head: plain(head),
    get: plain(got),
    sha256: createHash('sha256').update(body).digest('hex'),
    bytes: body.length,
    tags: plain(tags.TagSet ?? []),
  };
  const partCount = head.ETag?.includes('-')
    ? (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, PartNumber: 1 }))).PartsCount
    : undefined;
  if (partCount !== undefined) {
    captured.parts = [];
    for (let part = 1; part <= partCount; part++) {
      captured.parts.push(
        plain(
          await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, PartNumber: part, ChecksumMode: 'ENABLED' })),
        ),
      );
    }
  }
  return captured;
}

export async function captureBucket(s3: S3Client, bucket: string): Promise<CapturedBucket> {
  const listing: Json[] = [];
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token, MaxKeys: 7, FetchOwner: true }),
    );
    for (const object of page.Contents ?? []) {
      listing.push(plain(object));
      keys.push(object.Key!);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const uploads = (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
  const parts: Record<string, Json> = {};
  for (const upload of uploads) {
    parts[upload.UploadId!] = plain(
      await s3.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId })),
    );
  }
  const objects: Record<string, CapturedObject> = {};
  for (const key of keys) objects[key] = await captureObject(s3, bucket, key);
  return {
    listing,
    uploads: uploads.map(plain),
    parts,
    cors: await errorCodeOf(s3.send(new GetBucketCorsCommand({ Bucket: bucket }))),
    objects,
  };
}

export async function captureStore(s3: S3Client, buckets: readonly string[]): Promise<CapturedStore> {
  const store: CapturedStore = {};
  for (const bucket of buckets) store[bucket] = await captureBucket(s3, bucket);
  return store;
}

/**
 * The store as a restored snapshot answers it: a restore writes every file anew, so objects and uploads are as new as
 * the restore.
 */
export function withoutTimes(store: CapturedStore): Json {
  return JSON.parse(JSON.stringify(store), (name, value: Json) =>
    name === 'LastModified' || name === 'Initiated' ? undefined : value,
  ) as Json;
}
