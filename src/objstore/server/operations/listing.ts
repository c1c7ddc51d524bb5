/**
 * ListObjects (v1), ListObjectsV2 and ListObjectVersions, answered from the storage's keys in
 * S3's key order.
 */
import { createHash } from 'node:crypto';

import { canonicalIdOf } from '../../bucket-directory.ts';
import { reachOf, type BucketHandler, type OperationContext } from './context.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import {
  commonPrefixesOf,
  compareKeys,
  itemsOf,
  pageOf,
  parseEncodingType,
  parseIntegerParam,
  parsePrefixAndDelimiter,
  refuseParam,
  requireNonNegative,
  type ListEntry,
  type NameEncoder,
  type Page,
  type PageOptions,
} from './paging.ts';
import { commonPrefixes, ownerContent, s3Timestamp } from './result-xml.ts';
import { sendXmlResult, type XmlContent } from '../xml.ts';
import { singleParam } from '../target.ts';
import { NULL_VERSION_ID, requireNullVersion } from './versions.ts';

/** The most keys one page holds, and the default `max-keys`. */
const MAX_KEYS = 1000;

interface ObjectSummary {
  key: string;
  /** Quoted, as S3 writes it. */
  etag: string;
  size: number;
  lastModified: Date;
  storageClass: string;
}

/** What a listing shows of an object, as HeadObject shows it; null when it is gone. */
async function describeObject(ctx: OperationContext, bucket: string, key: string): Promise<ObjectSummary | null> {
  const head = await ctx.storage.headObject(bucket, key);
  return (
    head && {
      key,
      etag: String(head['etag']),
      size: Number(head['content-length']),
      lastModified: new Date(String(head['last-modified'])),
      storageClass: String(head['x-amz-storage-class'] ?? 'STANDARD'),
    }
  );
}

/** The bucket's keys under `prefix` that the request's key reaches. */
async function reachableKeys(ctx: OperationContext, bucket: string, prefix: string): Promise<string[]> {
  const reach = reachOf(ctx);
  if (reach === null) return [];
  const narrower = prefix.length >= reach.length ? prefix : reach;
  return (await ctx.storage.objectKeys(bucket, narrower)).filter(
    (key) => key.startsWith(reach) && key.startsWith(prefix),
  );
}

/** One page of the bucket's objects (those the key reaches); objects deleted while it was read are left out. */
async function listObjectPage(ctx: OperationContext, options: PageOptions): Promise<Page<ObjectSummary>> {
  const bucket = ctx.target.bucket!;
  const keys = (await reachableKeys(ctx, bucket, options.prefix)).sort(compareKeys);
  const page = pageOf(keys, (key) => key, options);
  const entries = await Promise.all(
    page.entries.map(async (entry): Promise<ListEntry<ObjectSummary> | null> => {
      if (entry.kind === 'commonPrefix') return entry;
      const summary = await describeObject(ctx, bucket, entry.item);
      return summary && { ...entry, item: summary };
    }),
  );
  return { entries: entries.filter((entry) => entry !== null), isTruncated: page.isTruncated };
}

/** The canonical id of the account owning the objects listed; null to leave Owner out. */
type ListedOwner = string | null;

function contents(object: ObjectSummary, encode: NameEncoder, owner: ListedOwner): XmlContent {
  return {
    Key: encode(object.key),
    LastModified: s3Timestamp(object.lastModified),
    ETag: object.etag,
    Size: object.size,
    Owner: owner === null ? undefined : ownerContent(owner),
    StorageClass: object.storageClass,
  };
}

/** Every Contents, then every CommonPrefixes: the order S3 writes them in, whatever the key order. */
function entries(page: Page<ObjectSummary>, encode: NameEncoder, owner: ListedOwner): XmlContent {
  return {
    Contents: itemsOf(page).map((object) => contents(object, encode, owner)),
    CommonPrefixes: commonPrefixes(commonPrefixesOf(page), encode),
  };
}

// Continuation tokens are opaque to clients: the name a page ended on, after a digest binding it
// to the bucket, so a mangled token or one from another bucket is refused rather than followed.
const TOKEN_DIGEST_BYTES = 8;

function tokenDigest(scope: string, name: Buffer): Buffer {
  return createHash('sha256').update(scope).update('\0').update(name).digest().subarray(0, TOKEN_DIGEST_BYTES);
}

/** A token resuming after `lastName` of a listing of `scope` (a bucket, or an account's buckets). */
export function continuationToken(scope: string, lastName: string): string {
  const name = Buffer.from(lastName, 'utf8');
  return Buffer.concat([tokenDigest(scope, name), name]).toString('base64');
}

/** The name a continuation token of a listing of `scope` resumes after. */
export function resumeAfter(scope: string, token: string): string {
  const raw = Buffer.from(token, 'base64');
  const name = raw.subarray(TOKEN_DIGEST_BYTES);
  const valid =
    name.length > 0 &&
    raw.toString('base64') === token &&
    raw.subarray(0, TOKEN_DIGEST_BYTES).equals(tokenDigest(scope, name));
  if (!valid) throw new GatewayError(errors.invalidContinuationToken());
  return name.toString('utf8');
}

function ownerIdOf(ctx: OperationContext): string {
  return canonicalIdOf(ctx.buckets.ownerOf(ctx.target.bucket!) ?? null);
}

/**
 * ListObjectsV2. What S3 refuses before looking up the bucket is refused first (max-keys that is
 * not an integer, a v1 `marker`); then a missing bucket is NoSuchBucket (dispatch.ts).
 */
export const listObjectsV2: BucketHandler = (ctx) => {
  const { query } = ctx.target;
  const maxKeys = parseIntegerParam(query, 'max-keys', MAX_KEYS);
  refuseParam(query, 'marker', errors.markerInListV2());
  return async () => {
    const bucket = ctx.target.bucket!;
    const { encodingType, encode } = parseEncodingType(query);
    // An empty continuation-token is no token, as S3 takes it (and echoes it, empty).
    const sentToken = singleParam(query, 'continuation-token');
    const token = sentToken || undefined;
    const startAfter = singleParam(query, 'start-after');
    const marker = token === undefined ? (startAfter ?? '') : resumeAfter(bucket, token);
    requireNonNegative(maxKeys, 'maxKeys');
    const { prefix, delimiter } = parsePrefixAndDelimiter(query);
    const page = await listObjectPage(ctx, { prefix, delimiter, marker, limit: Math.min(maxKeys, MAX_KEYS) });

    const last = page.entries.at(-1);
    const nextToken = page.isTruncated && last ? continuationToken(bucket, last.name) : undefined;
    const fetchOwner = singleParam(query, 'fetch-owner')?.toLowerCase() === 'true';
    sendXmlResult(ctx.exchange.res, 'ListBucketResult', {
      Name: bucket,
      Prefix: encode(prefix),
      StartAfter: startAfter === undefined ? undefined : encode(startAfter),
      ContinuationToken: sentToken,
      NextContinuationToken: nextToken,
      KeyCount: page.entries.length,
      MaxKeys: maxKeys,
      Delimiter: delimiter === '' ? undefined : encode(delimiter),
      EncodingType: encodingType,
      IsTruncated: page.isTruncated,
      ...entries(page, encode, fetchOwner ? ownerIdOf(ctx) : null),
    });
  };
};

/**
 * ListObjects (v1): paged by `marker`. NextMarker is written only with a delimiter, as S3 does;
 * without one, clients resume after the last key.
 */
export const listObjects: BucketHandler = (ctx) => {
  const { query } = ctx.target;
  const maxKeys = parseIntegerParam(query, 'max-keys', MAX_KEYS);
  refuseParam(query, 'continuation-token', errors.continuationTokenInListV1());
  refuseParam(query, 'start-after', errors.startAfterInListV1());
  return async () => {
    const { encodingType, encode } = parseEncodingType(query);
    requireNonNegative(maxKeys, 'maxKeys');
    const marker = singleParam(query, 'marker') ?? '';
    const { prefix, delimiter } = parsePrefixAndDelimiter(query);
    const page = await listObjectPage(ctx, { prefix, delimiter, marker, limit: Math.min(maxKeys, MAX_KEYS) });

    const last = page.entries.at(-1);
    const nextMarker = page.isTruncated && delimiter !== '' && last ? encode(last.name) : undefined;
    sendXmlResult(ctx.exchange.res, 'ListBucketResult', {
      Name: ctx.target.bucket!,
      // Unlike every other name, S3 writes v1's Prefix as sent, not URL-encoded.
      Prefix: prefix,
      Marker: encode(marker),
      NextMarker: nextMarker,
      MaxKeys: maxKeys,
      Delimiter: delimiter === '' ? undefined : encode(delimiter),
      EncodingType: encodingType,
      IsTruncated: page.isTruncated,
      ...entries(page, encode, ownerIdOf(ctx)),
    });
  };
};

/**
 * ListObjectVersions on the objstore's buckets, which are never versioned: every object is its
 * one version, `null` and the latest, as S3 lists an unversioned bucket's objects. Paged by
 * `key-marker` (and `version-id-marker`, which can only be `null` after a key marker), with
 * S3's prefix, delimiter, max-keys and encoding-type; owners are always listed.
 */
export const listObjectVersions: BucketHandler = (ctx) => {
  const { query } = ctx.target;
  const maxKeys = parseIntegerParam(query, 'max-keys', MAX_KEYS);
  // An empty marker is no marker, as S3 (and boto3's first page, which sends both empty) takes it.
  const keyMarker = singleParam(query, 'key-marker') ?? '';
  const versionIdMarker = singleParam(query, 'version-id-marker') ?? '';
  if (versionIdMarker !== '' && keyMarker === '') {
    throw new GatewayError(errors.versionIdMarkerWithoutKeyMarker());
  }
  requireNullVersion('version-id-marker', versionIdMarker || undefined);
  return async () => {
    const bucket = ctx.target.bucket!;
    const { encodingType, encode } = parseEncodingType(query);
    requireNonNegative(maxKeys, 'maxKeys');
    const { prefix, delimiter } = parsePrefixAndDelimiter(query);
    // Each key has one version, so the versions after (key, null) are those of the keys after it.
    const page = await listObjectPage(ctx, {
      prefix,
      delimiter,
      marker: keyMarker,
      limit: Math.min(maxKeys, MAX_KEYS),
    });
    const last = page.entries.at(-1);
    const owner = ownerIdOf(ctx);
    sendXmlResult(ctx.exchange.res, 'ListVersionsResult', {
      Name: bucket,
      Prefix: encode(prefix),
      KeyMarker: encode(keyMarker),
      VersionIdMarker: versionIdMarker,
      NextKeyMarker: page.isTruncated && last ? encode(last.name) : undefined,
      NextVersionIdMarker: page.isTruncated && last?.kind === 'item' ? NULL_VERSION_ID : undefined,
      MaxKeys: maxKeys,
      Delimiter: delimiter === '' ? undefined : encode(delimiter),
      EncodingType: encodingType,
      IsTruncated: page.isTruncated,
      Version: itemsOf(page).map((object) => {
        const { Key, ...rest } = contents(object, encode, owner);
        return { Key, VersionId: NULL_VERSION_ID, IsLatest: true, ...rest };
      }),
      CommonPrefixes: commonPrefixes(commonPrefixesOf(page), encode),
    });
  };
};
