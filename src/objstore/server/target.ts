import type { IncomingHttpHeaders } from 'node:http';
import querystring from 'node:querystring';

import { errors, GatewayError } from '../s3-errors.ts';

/** Decoded query, parsed as Node's querystring parses it (repeated names give lists). */
export type ParsedQuery = Readonly<Record<string, string | string[] | undefined>>;

/** A path-style S3 request target: `/<bucket>/<key>?<query>`. */
export interface RequestTarget {
  /** Path as received (still percent-encoded), always starting with '/'. */
  rawPath: string;
  /** Query string as received, without the '?'; '' when there is none. */
  rawQuery: string;
  query: ParsedQuery;
  /** Decoded bucket name; null for service-level requests (`/`). */
  bucket: string | null;
  /** Decoded object key; null for bucket- and service-level requests. */
  key: string | null;
  /** `/bucket/key` (decoded), the `Resource` of error responses. */
  resource: string;
}

function decodePathPart(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new GatewayError(errors.invalidUri());
  }
}

/** Parses `req.url` (origin-form, or absolute-form as sent to proxies). */
export function parseTarget(url: string | undefined): RequestTarget {
  let pathAndQuery = url ?? '';
  if (!pathAndQuery.startsWith('/')) {
    const absolute = /^https?:\/\/[^/?#]*(.*)$/i.exec(pathAndQuery);
    if (!absolute) throw new GatewayError(errors.invalidUri());
    pathAndQuery = absolute[1] || '/';
    if (!pathAndQuery.startsWith('/')) pathAndQuery = `/${pathAndQuery}`;
  }
  const hash = pathAndQuery.indexOf('#');
  if (hash !== -1) pathAndQuery = pathAndQuery.slice(0, hash);
  const questionMark = pathAndQuery.indexOf('?');
  const rawPath = questionMark === -1 ? pathAndQuery : pathAndQuery.slice(0, questionMark);
  const rawQuery = questionMark === -1 ? '' : pathAndQuery.slice(questionMark + 1);

  const rest = rawPath.slice(1);
  const slash = rest.indexOf('/');
  const rawBucket = slash === -1 ? rest : rest.slice(0, slash);
  const rawKey = slash === -1 ? '' : rest.slice(slash + 1);
  if (rawBucket === '' && rawPath !== '/') throw new GatewayError(errors.invalidUri());

  const bucket = rawBucket === '' ? null : decodePathPart(rawBucket);
  const key = rawKey === '' ? null : decodePathPart(rawKey);
  const resource = bucket === null ? '/' : key === null ? `/${bucket}` : `/${bucket}/${key}`;

  return {
    rawPath,
    rawQuery,
    query: querystring.parse(rawQuery),
    bucket,
    key,
    resource,
  };
}

export function hasParam(query: ParsedQuery, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(query, name);
}

/** The single value of a query parameter; a repeated parameter is a client error. */
export function singleParam(query: ParsedQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) {
    throw new GatewayError(errors.repeatedQueryParameter(name));
  }
  return value;
}

// ---------------------------------------------------------------------------------------
// Names the storage can hold. Bucket names become folder names as they are; keys are mapped onto
// file names by the storage (storage/files-layout.ts), so any key S3 takes is stored.

const BUCKET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const MAX_KEY_BYTES = 1024;

export function isValidBucketName(name: string): boolean {
  return BUCKET_NAME.test(name);
}

export function validateBucketName(name: string): void {
  if (!isValidBucketName(name)) throw new GatewayError(errors.invalidBucketName());
}

/** S3's one limit on keys: 1,024 bytes of UTF-8. */
export function validateObjectKey(key: string): void {
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new GatewayError(errors.keyTooLong());
}

const UPLOAD_ID = /^[A-Za-z0-9_-]{1,256}$/;

/** Upload ids become directory names in the storage; anything unexpected cannot exist. */
export function validateUploadId(uploadId: string | undefined): string {
  if (uploadId === undefined || !UPLOAD_ID.test(uploadId)) throw new GatewayError(errors.noSuchUpload());
  return uploadId;
}

export function validatePartNumber(partNumber: string | undefined): number {
  const value = partNumber !== undefined && /^\d{1,5}$/.test(partNumber) ? Number(partNumber) : NaN;
  if (!(value >= 1 && value <= 10000)) {
    throw new GatewayError(errors.invalidPartNumber());
  }
  return value;
}

/**
 * The source of CopyObject / UploadPartCopy as S3 reads it: URL-encoded, an optional leading
 * '/', the bucket up to the first '/' and the key after it, then an optional `?versionId=`
 * (as sent: the operation judges it, versions.ts).
 */
export function parseCopySource(
  headers: IncomingHttpHeaders,
): { bucket: string; key: string; versionId: string | null } | null {
  const header = headers['x-amz-copy-source'];
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header.join(',') : header;
  // `?versionId=` after the encoded source names a version of it (a `?` of the key is encoded).
  const question = value.indexOf('?');
  const versionId = question === -1 ? null : querystring.parse(value.slice(question + 1))['versionId'];
  if (Array.isArray(versionId)) throw new GatewayError(errors.invalidCopySource('version id'));
  let decoded: string;
  try {
    decoded = decodeURIComponent(question === -1 ? value : value.slice(0, question));
  } catch {
    throw new GatewayError(errors.invalidCopySource('encoding'));
  }
  const withoutSlash = decoded.startsWith('/') ? decoded.slice(1) : decoded;
  const slash = withoutSlash.indexOf('/');
  const bucket = slash === -1 ? withoutSlash : withoutSlash.slice(0, slash);
  const key = slash === -1 ? '' : withoutSlash.slice(slash + 1);
  if (!isValidBucketName(bucket)) {
    throw new GatewayError(errors.invalidCopySource('bucket name'));
  }
  if (key === '') throw new GatewayError(errors.invalidCopySource('object key'));
  validateObjectKey(key);
  return { bucket, key, versionId: versionId ?? null };
}
