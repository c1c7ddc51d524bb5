/**
 * Conditional requests as S3 evaluates them (RFC 7232 order): If-Match, else If-Unmodified-Since;
 * then If-None-Match, else If-Modified-Since. So If-Match true with If-Unmodified-Since false
 * proceeds, and If-None-Match false with If-Modified-Since true is "not modified".
 *
 * Reads (GetObject, HeadObject) answer 412 PreconditionFailed or 304 Not Modified; CopyObject's
 * `x-amz-copy-source-if-*` answer 412 for every failed condition; writes (PutObject,
 * CompleteMultipartUpload) take If-Match (412, or 404 NoSuchKey when there is no object) or
 * If-None-Match: * (412 when the key exists).
 */
import type { IncomingHttpHeaders } from 'node:http';

import { errors, GatewayError } from '../../s3-errors.ts';

/** What conditions are evaluated against: the object as it is now. */
export interface ObjectState {
  /** Quoted, as in the ETag header. */
  etag: string;
  lastModified: Date;
}

export type ReadVerdict = { kind: 'proceed' } | { kind: 'not-modified' } | { kind: 'failed'; condition: string };

const UNACCEPTED_VALUE = "We don't accept the provided value of If-None-Match header for this API";

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Whether an If-Match / If-None-Match list names the ETag; S3 accepts ETags with or without quotes. */
export function etagListMatches(list: string, etag: string): boolean {
  const bare = etag.replace(/"/g, '');
  return list
    .split(',')
    .map((item) => item.trim())
    .some((item) => item === '*' || item.replace(/^W\//, '').replace(/"/g, '') === bare);
}

/** An HTTP date; null for anything else, which S3 ignores. */
function parseDate(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time);
}

/** Last-Modified goes out to the second, so clients compare against whole seconds. */
function modifiedAfter(state: ObjectState, date: Date): boolean {
  return Math.floor(state.lastModified.getTime() / 1000) > Math.floor(date.getTime() / 1000);
}

/** The four conditional headers of a request, by the names they go under. */
interface ConditionNames {
  ifMatch: string;
  ifNoneMatch: string;
  ifModifiedSince: string;
  ifUnmodifiedSince: string;
}

const READ_CONDITIONS: ConditionNames = {
  ifMatch: 'If-Match',
  ifNoneMatch: 'If-None-Match',
  ifModifiedSince: 'If-Modified-Since',
  ifUnmodifiedSince: 'If-Unmodified-Since',
};

const COPY_SOURCE_CONDITIONS: ConditionNames = {
  ifMatch: 'x-amz-copy-source-If-Match',
  ifNoneMatch: 'x-amz-copy-source-If-None-Match',
  ifModifiedSince: 'x-amz-copy-source-If-Modified-Since',
  ifUnmodifiedSince: 'x-amz-copy-source-If-Unmodified-Since',
};

function evaluate(headers: IncomingHttpHeaders, names: ConditionNames, state: ObjectState, now: Date): ReadVerdict {
  const value = (name: string) => header(headers, name.toLowerCase());
  const ifMatch = value(names.ifMatch);
  if (ifMatch !== undefined) {
    if (!etagListMatches(ifMatch, state.etag)) return { kind: 'failed', condition: names.ifMatch };
  } else {
    const unmodifiedSince = parseDate(value(names.ifUnmodifiedSince));
    if (unmodifiedSince !== null && modifiedAfter(state, unmodifiedSince)) {
      return { kind: 'failed', condition: names.ifUnmodifiedSince };
    }
  }
  const ifNoneMatch = value(names.ifNoneMatch);
  if (ifNoneMatch !== undefined) {
    if (etagListMatches(ifNoneMatch, state.etag)) return { kind: 'not-modified' };
    return { kind: 'proceed' };
  }
  const modifiedSince = parseDate(value(names.ifModifiedSince));
  // A date in the future is ignored, as S3 ignores it.
  if (modifiedSince !== null && modifiedSince.getTime() <= now.getTime() && !modifiedAfter(state, modifiedSince)) {
    return { kind: 'not-modified' };
  }
  return { kind: 'proceed' };
}

/** GetObject / HeadObject: whether to serve the object, answer 304, or 412 for the named condition. */
export function evaluateReadConditions(headers: IncomingHttpHeaders, state: ObjectState, now: Date): ReadVerdict {
  return evaluate(headers, READ_CONDITIONS, state, now);
}

/** CopyObject (and UploadPartCopy): throws 412 PreconditionFailed unless the source meets every condition. */
export function requireCopySourceConditions(headers: IncomingHttpHeaders, source: ObjectState, now: Date): void {
  const verdict = evaluate(headers, COPY_SOURCE_CONDITIONS, source, now);
  if (verdict.kind === 'proceed') return;
  // For a copy, "not modified" is a failed precondition too, named by the header that decided it.
  const condition =
    verdict.kind === 'failed'
      ? verdict.condition
      : header(headers, COPY_SOURCE_CONDITIONS.ifNoneMatch.toLowerCase()) !== undefined
        ? COPY_SOURCE_CONDITIONS.ifNoneMatch
        : COPY_SOURCE_CONDITIONS.ifModifiedSince;
  throw new GatewayError(errors.preconditionFailed(condition));
}

export function hasCopySourceConditions(headers: IncomingHttpHeaders): boolean {
  return Object.values(COPY_SOURCE_CONDITIONS).some((name) => headers[name.toLowerCase()] !== undefined);
}

export function hasWriteConditions(headers: IncomingHttpHeaders): boolean {
  return headers['if-match'] !== undefined || headers['if-none-match'] !== undefined;
}

/**
 * PutObject / CompleteMultipartUpload: throws unless the object now under `key` (null: none)
 * meets If-Match or If-None-Match. S3 takes one of them, If-None-Match only as `*`, If-Match only
 * with an ETag: anything else is 501 NotImplemented.
 */
export function requireWriteConditions(headers: IncomingHttpHeaders, key: string, current: ObjectState | null): void {
  const ifMatch = header(headers, 'if-match');
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifMatch !== undefined && ifNoneMatch !== undefined) {
    throw new GatewayError(
      errors.unsupportedWriteCondition(
        'If-Match,If-None-Match',
        'Multiple conditional request headers present in the request',
      ),
    );
  }
  if ((ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*') || ifMatch?.trim() === '*') {
    throw new GatewayError(errors.unsupportedWriteCondition('If-None-Match', UNACCEPTED_VALUE));
  }
  if (ifMatch !== undefined) {
    if (current === null) throw new GatewayError(errors.noSuchKey(key));
    if (!etagListMatches(ifMatch, current.etag)) throw new GatewayError(errors.preconditionFailed('If-Match'));
  }
  if (ifNoneMatch !== undefined && current !== null) {
    throw new GatewayError(errors.preconditionFailed('If-None-Match'));
  }
}
