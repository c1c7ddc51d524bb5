/**
 * ListObjects (v1) and ListObjectsV2, answered from s3rver's filesystem store rather than by
 * s3rver: its continuation tokens need DES (a 500 on Node >= 17 without the legacy OpenSSL
 * provider), and it lists in directory order rather than S3's key order.
 */
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

import type { S3rverStore } from './backend.ts';
import { canonicalIdOf } from './bucket-directory.ts';
import { bucketExists, isMissingFile, type OperationContext } from './compat.ts';
import { errors, GatewayError } from './errors.ts';
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
import { accountXml, commonPrefixesXml, element, optionalElement, s3Timestamp, sendXmlResult } from './result-xml.ts';
import { singleParam } from './target.ts';

/** The most keys one page holds, and the default `max-keys`. */
const MAX_KEYS = 1000;

/** s3rver stores an object as `<bucket>/<key>._S3rver_object`, beside sidecar files. */
const OBJECT_SUFFIX = '._S3rver_object';
/** s3rver keeps multipart uploads in progress in `<bucket>/._S3rver_uploads/`. */
const UPLOADS_DIRECTORY = '._S3rver_uploads';

interface ObjectSummary {
  key: string;
  /** Quoted, as S3 writes it. */
  etag: string;
  size: number;
  lastModified: Date;
  storageClass: string;
}

async function readDirectory(directory: string): Promise<Dirent[]> {
  try {
    return await readdir(directory, { withFileTypes: true });
  } catch (err) {
    if (isMissingFile(err)) return [];
    throw err;
  }
}

/** Adds to `keys` the keys stored under `directory` (whose keys start with `keyPrefix`) that start with `prefix`. */
async function collectKeys(directory: string, keyPrefix: string, prefix: string, keys: string[]): Promise<void> {
  const entries = await readDirectory(directory);
  await Promise.all(
    entries.map(async (entry) => {
      if (entry.isDirectory()) {
        if (keyPrefix === '' && entry.name === UPLOADS_DIRECTORY) return;
        const nestedPrefix = `${keyPrefix}${entry.name}/`;
        if (nestedPrefix.startsWith(prefix) || prefix.startsWith(nestedPrefix)) {
          await collectKeys(path.join(directory, entry.name), nestedPrefix, prefix, keys);
        }
      } else if (entry.isFile() && entry.name.endsWith(OBJECT_SUFFIX)) {
        const key = keyPrefix + entry.name.slice(0, -OBJECT_SUFFIX.length);
        if (key.startsWith(prefix)) keys.push(key);
      }
    }),
  );
}

/** Every object key in the bucket that starts with `prefix`, in S3's key order. */
async function objectKeys(store: S3rverStore, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  await collectKeys(store.getBucketPath(bucket), '', prefix, keys);
  return keys.sort(compareKeys);
}

/** What a listing shows of an object, as HeadObject shows it; null when it is gone. */
async function describeObject(store: S3rverStore, bucket: string, key: string): Promise<ObjectSummary | null> {
  try {
    const metadata = await store.getMetadata(bucket, key);
    return {
      key,
      etag: String(metadata['etag']),
      size: Number(metadata['content-length']),
      lastModified: new Date(String(metadata['last-modified'])),
      storageClass: String(metadata['x-amz-storage-class'] ?? 'STANDARD'),
    };
  } catch (err) {
    if (isMissingFile(err)) return null;
    throw err;
  }
}

/** One page of the bucket's objects; objects deleted while it was read are left out. */
async function listObjectPage(ctx: OperationContext, options: PageOptions): Promise<Page<ObjectSummary>> {
  const { store } = ctx.backend;
  const bucket = ctx.target.bucket!;
  const page = pageOf(await objectKeys(store, bucket, options.prefix), (key) => key, options);
  const entries = await Promise.all(
    page.entries.map(async (entry): Promise<ListEntry<ObjectSummary> | null> => {
      if (entry.kind === 'commonPrefix') return entry;
      const summary = await describeObject(store, bucket, entry.item);
      return summary && { ...entry, item: summary };
    }),
  );
  return { entries: entries.filter((entry) => entry !== null), isTruncated: page.isTruncated };
}

/** The canonical id of the account owning the objects listed; null to leave Owner out. */
type ListedOwner = string | null;

function contentsXml(object: ObjectSummary, encode: NameEncoder, owner: ListedOwner): string {
  return (
    '<Contents>' +
    element('Key', encode(object.key)) +
    element('LastModified', s3Timestamp(object.lastModified)) +
    element('ETag', object.etag) +
    element('Size', object.size) +
    (owner === null ? '' : accountXml('Owner', owner)) +
    element('StorageClass', object.storageClass) +
    '</Contents>'
  );
}

/** Every Contents, then every CommonPrefixes: the order S3 writes them in, whatever the key order. */
function entriesXml(page: Page<ObjectSummary>, encode: NameEncoder, owner: ListedOwner): string {
  return (
    itemsOf(page)
      .map((object) => contentsXml(object, encode, owner))
      .join('') +
    commonPrefixesXml(commonPrefixesOf(page), encode)
  );
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
  if (!valid) throw new GatewayError(errors.invalidArgument('The continuation token provided is incorrect'));
  return name.toString('utf8');
}

function ownerIdOf(ctx: OperationContext): string {
  return canonicalIdOf(ctx.buckets.ownerOf(ctx.target.bucket!) ?? null);
}

/**
 * ListObjectsV2. What S3 refuses before looking up the bucket is refused first (max-keys that is
 * not an integer, a v1 `marker`); a missing bucket is left to s3rver's NoSuchBucket.
 */
export async function listObjectsV2(ctx: OperationContext): Promise<void> {
  const { query } = ctx.target;
  const maxKeys = parseIntegerParam(query, 'max-keys', MAX_KEYS);
  refuseParam(query, 'marker', 'Marker unsupported with REST.GET.BUCKET in list-type=2');
  if (!(await bucketExists(ctx))) return ctx.delegate();

  const bucket = ctx.target.bucket!;
  const { encodingType, encode } = parseEncodingType(query);
  // An empty continuation-token is no token, as S3 takes it.
  const token = singleParam(query, 'continuation-token') || undefined;
  const startAfter = singleParam(query, 'start-after');
  const marker = token === undefined ? (startAfter ?? '') : resumeAfter(bucket, token);
  requireNonNegative(maxKeys, 'maxKeys');
  const { prefix, delimiter } = parsePrefixAndDelimiter(query);
  const page = await listObjectPage(ctx, { prefix, delimiter, marker, limit: Math.min(maxKeys, MAX_KEYS) });

  const last = page.entries.at(-1);
  const nextToken = page.isTruncated && last ? continuationToken(bucket, last.name) : undefined;
  const fetchOwner = singleParam(query, 'fetch-owner')?.toLowerCase() === 'true';
  sendXmlResult(
    ctx.exchange.res,
    'ListBucketResult',
    element('Name', bucket) +
      element('Prefix', encode(prefix)) +
      optionalElement('StartAfter', startAfter === undefined ? undefined : encode(startAfter)) +
      optionalElement('ContinuationToken', token) +
      optionalElement('NextContinuationToken', nextToken) +
      element('KeyCount', page.entries.length) +
      element('MaxKeys', maxKeys) +
      optionalElement('Delimiter', delimiter === '' ? undefined : encode(delimiter)) +
      optionalElement('EncodingType', encodingType) +
      element('IsTruncated', page.isTruncated) +
      entriesXml(page, encode, fetchOwner ? ownerIdOf(ctx) : null),
  );
}

/**
 * ListObjects (v1): paged by `marker`. NextMarker is written only with a delimiter, as S3 does;
 * without one, clients resume after the last key.
 */
export async function listObjects(ctx: OperationContext): Promise<void> {
  const { query } = ctx.target;
  const maxKeys = parseIntegerParam(query, 'max-keys', MAX_KEYS);
  refuseParam(query, 'continuation-token', 'continuation-token only supported in REST.GET.BUCKET with list-type=2');
  refuseParam(query, 'start-after', 'startAfter only supported in REST.GET.BUCKET with list-type=2');
  if (!(await bucketExists(ctx))) return ctx.delegate();

  const { encodingType, encode } = parseEncodingType(query);
  requireNonNegative(maxKeys, 'maxKeys');
  const marker = singleParam(query, 'marker') ?? '';
  const { prefix, delimiter } = parsePrefixAndDelimiter(query);
  const page = await listObjectPage(ctx, { prefix, delimiter, marker, limit: Math.min(maxKeys, MAX_KEYS) });

  const last = page.entries.at(-1);
  const nextMarker = page.isTruncated && delimiter !== '' && last ? encode(last.name) : undefined;
  sendXmlResult(
    ctx.exchange.res,
    'ListBucketResult',
    element('Name', ctx.target.bucket!) +
      // Unlike every other name, S3 writes v1's Prefix as sent, not URL-encoded.
      element('Prefix', prefix) +
      element('Marker', encode(marker)) +
      optionalElement('NextMarker', nextMarker) +
      element('MaxKeys', maxKeys) +
      optionalElement('Delimiter', delimiter === '' ? undefined : encode(delimiter)) +
      optionalElement('EncodingType', encodingType) +
      element('IsTruncated', page.isTruncated) +
      entriesXml(page, encode, ownerIdOf(ctx)),
  );
}
