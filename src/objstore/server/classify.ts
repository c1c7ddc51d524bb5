import type { IncomingHttpHeaders } from 'node:http';

import { errors, type S3ErrorSpec } from '../s3-errors.ts';
import { hasParam, type RequestTarget } from './target.ts';
import {
  BUCKET_SUBRESOURCES,
  OBJECT_SUBRESOURCES,
  type BucketSubresource,
  type S3Operation,
} from '../s3-operations.ts';
import type { ObjstorePermission } from '../types.ts';

/** What it takes to be allowed to perform an operation. */
export type OperationAccess =
  /** Allowed for keys holding all of these permissions. */
  | { kind: 'require'; permissions: readonly ObjstorePermission[] }
  /** Never allowed for any key (bucket configuration: policies, ACLs, lifecycles and the like). */
  | { kind: 'refuse' }
  /** Not a valid request; answered with this error once the caller is authenticated. */
  | { kind: 'reject'; error: S3ErrorSpec }
  /**
   * Answered to anyone, without authentication: a CORS preflight, which changes nothing and is answered from the
   * bucket's rules.
   */
  | { kind: 'anyone' };

export interface ClassifiedOperation {
  /** `Unknown` for combinations S3 has no name for. */
  operation: S3Operation;
  access: OperationAccess;
  /** The subresource query parameter that selected the operation (`uploads`, `tagging`, ...). */
  subresource: string | null;
}

const needs = (...permissions: ObjstorePermission[]): OperationAccess => ({ kind: 'require', permissions });
const refuse: OperationAccess = { kind: 'refuse' };

const BUCKET_SUBRESOURCE_NAMES = Object.keys(BUCKET_SUBRESOURCES) as BucketSubresource[];

/**
 * Query parameters that select a different operation on an object: its own, and a bucket's (see OBJECT_SUBRESOURCES).
 */
const OBJECT_SUBRESOURCE_NAMES = new Set<string>([...BUCKET_SUBRESOURCE_NAMES, ...Object.keys(OBJECT_SUBRESOURCES)]);

/** The operation a subresource selects with this method; `Unknown` when S3 has none. */
function subresourceOperation(
  table: Readonly<Record<string, Readonly<Partial<Record<string, S3Operation>>>>>,
  subresource: string,
  method: string,
): S3Operation {
  return table[subresource]?.[method] ?? 'Unknown';
}

function selectSubresource(
  target: RequestTarget,
  candidates: Iterable<string>,
): { subresource: string | null; conflict: S3ErrorSpec | null } {
  const matched = [...candidates].filter((name) => hasParam(target.query, name)).sort();
  if (matched.length > 1) {
    return {
      subresource: matched[0]!,
      conflict: errors.conflictingQueryParameters(matched),
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
  const op = (operation: S3Operation, access: OperationAccess): ClassifiedOperation => ({
    operation,
    access,
    subresource,
  });
  const selected = () => subresourceOperation(BUCKET_SUBRESOURCES, subresource!, method);
  switch (method) {
    case 'HEAD':
      return op('HeadBucket', needs('get'));
    case 'GET':
      if (subresource === null) {
        return op(target.query['list-type'] === '2' ? 'ListObjectsV2' : 'ListObjects', needs('get'));
      }
      return op(selected(), needs(subresource === 'uploads' ? 'multipart' : 'get'));
    // Of a bucket's configuration, only its CORS rules may be set: they are how a page the user serves gets to use the
    // objstore.
    case 'PUT':
      return subresource === null
        ? op('CreateBucket', needs('buckets'))
        : op(selected(), subresource === 'cors' ? needs('buckets') : refuse);
    case 'DELETE':
      return subresource === null
        ? op('DeleteBucket', needs('buckets'))
        : op(selected(), subresource === 'cors' ? needs('buckets') : refuse);
    case 'POST':
      if (subresource === 'delete') return op('DeleteObjects', needs('delete'));
      // Browser form upload: the form's policy signature authenticates it (post-object.ts).
      if (subresource === null) return op('PostObject', needs('create'));
      return op('Unknown', refuse);
    default:
      return op('Unknown', { kind: 'reject', error: errors.methodNotAllowed() });
  }
}

function classifyObject(method: string, subresource: string | null, headers: IncomingHttpHeaders): ClassifiedOperation {
  const op = (operation: S3Operation, access: OperationAccess): ClassifiedOperation => ({
    operation,
    access,
    subresource,
  });
  const selected = (as = method) => subresourceOperation(OBJECT_SUBRESOURCES, subresource!, as);
  const copy = headers['x-amz-copy-source'] !== undefined;
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (subresource === null) return op(method === 'GET' ? 'GetObject' : 'HeadObject', needs('get'));
      if (subresource === 'uploadId') return op('ListParts', needs('multipart'));
      return op(selected('GET'), needs('get'));
    case 'PUT':
      if (subresource === null)
        return copy ? op('CopyObject', needs('create', 'get')) : op('PutObject', needs('create'));
      if (subresource === 'uploadId') {
        return copy ? op('UploadPartCopy', needs('multipart', 'get')) : op('UploadPart', needs('multipart'));
      }
      return op(selected(), copy ? needs('create', 'get') : needs('create'));
    case 'POST':
      if (subresource === 'uploads') return op('CreateMultipartUpload', needs('multipart'));
      if (subresource === 'uploadId') return op('CompleteMultipartUpload', needs('multipart', 'create'));
      if (subresource === 'select') return op('SelectObjectContent', needs('get'));
      return op(subresource === null ? 'Unknown' : selected(), needs('create'));
    case 'DELETE':
      if (subresource === 'uploadId') return op('AbortMultipartUpload', needs('multipart'));
      return op(subresource === null ? 'DeleteObject' : selected(), needs('delete'));
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
  // Whatever its target and parameters: a preflight names the request a page would send next.
  if (method === 'OPTIONS') return { operation: 'OptionsObject', access: { kind: 'anyone' }, subresource: null };
  if (target.bucket === null) return classifyService(method);
  const isObject = target.key !== null;
  const { subresource, conflict } = selectSubresource(
    target,
    isObject ? OBJECT_SUBRESOURCE_NAMES : BUCKET_SUBRESOURCE_NAMES,
  );
  const classified = isObject
    ? classifyObject(method, subresource, headers)
    : classifyBucket(method, target, subresource);
  // Conflicting subresources are a client error, unless the operation is refused anyway.
  if (conflict && classified.access.kind !== 'refuse') {
    return { ...classified, access: { kind: 'reject', error: conflict } };
  }
  return classified;
}
