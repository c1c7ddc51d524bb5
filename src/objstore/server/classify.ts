import type { IncomingHttpHeaders } from 'node:http';

import { errors } from './errors.ts';
import type { S3ErrorSpec } from '../s3-errors.ts';
import { hasParam, type RequestTarget } from './target.ts';
import { BUCKET_SUBRESOURCES, OBJECT_SUBRESOURCE_NOUNS, type BucketSubresource, type ObjectSubresource, type S3Operation } from '../s3-operations.ts';
import type { ObjstorePermission } from '../types.ts';

/** What it takes to be allowed to perform an operation. */
export type OperationAccess =
  /** Allowed for keys holding all of these permissions. */
  | { kind: 'require'; permissions: readonly ObjstorePermission[] }
  /** Never allowed for any key (bucket configuration: policies, ACLs, lifecycles and the like). */
  | { kind: 'refuse' }
  /** Not a valid request; answered with this error once the caller is authenticated. */
  | { kind: 'reject'; error: S3ErrorSpec };

export interface ClassifiedOperation {
  /** `Unknown` for combinations S3 has no name for. */
  operation: S3Operation;
  access: OperationAccess;
  /** The subresource query parameter that selected the operation (`uploads`, `tagging`, ...). */
  subresource: string | null;
}

const needs = (...permissions: ObjstorePermission[]): OperationAccess => ({ kind: 'require', permissions });
const refuse: OperationAccess = { kind: 'refuse' };

/**
 * Query parameters that select a different operation on a bucket: a superset of s3rver's own
 * list (lib/controllers/bucket.js METHODS), so the gateway never sees a plain request where
 * s3rver sees a subresource one.
 */
const BUCKET_SUBRESOURCE_NAMES = Object.keys(BUCKET_SUBRESOURCES) as BucketSubresource[];

/**
 * Query parameters that select a different operation on an object. s3rver routes object
 * requests on the union of its bucket and object lists, so this is a superset of both.
 */
const OBJECT_SUBRESOURCES = new Set([
  ...BUCKET_SUBRESOURCE_NAMES,
  'attributes',
  'legal-hold',
  'restore',
  'retention',
  'select',
  'torrent',
  'uploadId',
]);

function selectSubresource(
  target: RequestTarget,
  candidates: Iterable<string>,
): { subresource: string | null; conflict: S3ErrorSpec | null } {
  const matched = [...candidates].filter((name) => hasParam(target.query, name)).sort();
  if (matched.length > 1) {
    return {
      subresource: matched[0]!,
      conflict: errors.invalidArgument(`Conflicting query string parameters: ${matched.join(', ')}`),
    };
  }
  return { subresource: matched[0] ?? null, conflict: null };
}

function classifyService(method: string): ClassifiedOperation {
  if (method === 'GET' || method === 'HEAD') {
    return { operation: 'ListBuckets', access: needs('get'), subresource: null };
  }
  return { operation: 'Unknown', access: { kind: 'reject', error: errors.methodNotAllowed() }, subresource: null };
}

function classifyBucket(method: string, target: RequestTarget, subresource: string | null): ClassifiedOperation {
  const op = (operation: S3Operation, access: OperationAccess): ClassifiedOperation => ({ operation, access, subresource });
  const noun = subresource === null ? null : BUCKET_SUBRESOURCES[subresource as BucketSubresource];
  switch (method) {
    case 'HEAD':
      return op('HeadBucket', needs('get'));
    case 'GET':
      if (noun === null) {
        return op(target.query['list-type'] === '2' ? 'ListObjectsV2' : 'ListObjects', needs('get'));
      }
      if (subresource === 'uploads') return op('ListMultipartUploads', needs('multipart'));
      if (subresource === 'versions') return op('ListObjectVersions', needs('get'));
      if (subresource === 'delete') return op('Unknown', needs('get'));
      return op(`Get${noun}`, needs('get'));
    // Of a bucket's configuration, only its CORS rules may be set: they are how a page the user serves gets to use the objstore.
    case 'PUT':
      return noun === null ? op('CreateBucket', needs('buckets')) : op(`Put${noun}`, subresource === 'cors' ? needs('buckets') : refuse);
    case 'DELETE':
      return noun === null ? op('DeleteBucket', needs('buckets')) : op(`Delete${noun}`, subresource === 'cors' ? needs('buckets') : refuse);
    case 'POST':
      if (subresource === 'delete') return op('DeleteObjects', needs('delete'));
      // Browser form upload: the form's policy signature authenticates it (post-object.ts).
      if (subresource === null) return op('PostObject', needs('create'));
      return op('Unknown', refuse);
    default:
      return op('Unknown', { kind: 'reject', error: errors.methodNotAllowed() });
  }
}

function classifyObject(
  method: string,
  subresource: string | null,
  headers: IncomingHttpHeaders,
): ClassifiedOperation {
  const op = (operation: S3Operation, access: OperationAccess): ClassifiedOperation => ({ operation, access, subresource });
  // Undefined for the subresources without operations of their own (`uploads`, `select`, ...).
  const noun: (typeof OBJECT_SUBRESOURCE_NOUNS)[ObjectSubresource] | undefined =
    subresource === null ? undefined : OBJECT_SUBRESOURCE_NOUNS[subresource as ObjectSubresource];
  const copy = headers['x-amz-copy-source'] !== undefined;
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (subresource === null) return op(method === 'GET' ? 'GetObject' : 'HeadObject', needs('get'));
      if (subresource === 'uploadId') return op('ListParts', needs('multipart'));
      return op(noun ? `Get${noun}` : 'Unknown', needs('get'));
    case 'PUT':
      if (subresource === null) return copy ? op('CopyObject', needs('create', 'get')) : op('PutObject', needs('create'));
      if (subresource === 'uploadId') {
        return copy ? op('UploadPartCopy', needs('multipart', 'get')) : op('UploadPart', needs('multipart'));
      }
      // s3rver treats subresources it does not know as a plain PutObject / CopyObject.
      return op(noun ? `Put${noun}` : 'Unknown', copy ? needs('create', 'get') : needs('create'));
    case 'POST':
      if (subresource === 'uploads') return op('CreateMultipartUpload', needs('multipart'));
      if (subresource === 'uploadId') return op('CompleteMultipartUpload', needs('multipart', 'create'));
      if (subresource === 'select') return op('SelectObjectContent', needs('get'));
      if (subresource === 'restore') return op('RestoreObject', needs('create'));
      return op('Unknown', needs('create'));
    case 'DELETE':
      if (subresource === 'uploadId') return op('AbortMultipartUpload', needs('multipart'));
      if (subresource === 'tagging') return op('DeleteObjectTagging', needs('delete'));
      // s3rver treats subresources it does not know as a plain DeleteObject.
      return op(subresource === null ? 'DeleteObject' : 'Unknown', needs('delete'));
    default:
      return op('Unknown', { kind: 'reject', error: errors.methodNotAllowed() });
  }
}

/** Names the S3 operation of a path-style request and what is needed to perform it. */
export function classifyOperation(
  method: string,
  target: RequestTarget,
  headers: IncomingHttpHeaders,
): ClassifiedOperation {
  if (target.bucket === null) return classifyService(method);
  const isObject = target.key !== null;
  const { subresource, conflict } = selectSubresource(
    target,
    isObject ? OBJECT_SUBRESOURCES : BUCKET_SUBRESOURCE_NAMES,
  );
  const classified = isObject ? classifyObject(method, subresource, headers) : classifyBucket(method, target, subresource);
  // Conflicting subresources are a client error, unless the operation is refused anyway.
  if (conflict && classified.access.kind !== 'refuse') {
    return { ...classified, access: { kind: 'reject', error: conflict } };
  }
  return classified;
}
