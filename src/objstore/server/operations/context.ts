/** What an operation's handler (dispatch.ts) is given, and the checks several of them share. */
import type { BucketDirectory } from '../../bucket-directory.ts';
import type { ObjstoreStorage } from '../../storage/storage.ts';
import type { ObjstoreKey, ObjstoreKeyLookup } from '../../types.ts';
import type { ChunkSignatures } from '../auth/sigv4.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import type { Exchange } from '../exchange.ts';
import { singleParam, validateUploadId, type RequestTarget } from '../target.ts';
import type { TurnTaking } from '../turn-taking.ts';

export interface OperationContext {
  readonly exchange: Exchange;
  readonly target: RequestTarget;
  /** The subresource query parameter that selected the operation (classify.ts); null for none. */
  readonly subresource: string | null;
  readonly storage: ObjstoreStorage;
  readonly buckets: BucketDirectory;
  /** Every access key, for an operation that authenticates itself (a browser form's policy signature). */
  readonly keys: ObjstoreKeyLookup;
  /** The key that signed the request; null for an unsigned one. */
  readonly key: ObjstoreKey | null;
  /**
   * The payload hash the request's signature holds its body to (a hex SHA-256, UNSIGNED-PAYLOAD or
   * STREAMING-*; see signature.ts); null for an unsigned request or a browser form.
   */
  readonly payloadHash: string | null;
  /** The chunk signatures of an aws-chunked body with signed chunks, to check while decoding it. */
  readonly chunkSignatures: ChunkSignatures;
  /**
   * Reads the whole body (first sending 100 Continue); MaxMessageLengthExceeded beyond `limit`,
   * and refused unless it is the body signed (signed-payload.ts).
   */
  readBody(limit: number): Promise<Buffer>;
  /** Wall-clock time, which conditional requests compare dates with. */
  now(): Date;
  /** Conditional writes of one key take turns (conditional-operations.ts). */
  readonly conditionalWrites: TurnTaking;
  /** The smallest size CompleteMultipartUpload takes for every part but the last. */
  readonly minPartSize: number;
}

/** S3's minimum size of every part but the last. */
export const S3_MIN_PART_SIZE = 5 * 1024 * 1024;

/** Answers an operation; throw a GatewayError to answer with an S3 error. */
export type OperationHandler = (ctx: OperationContext) => Promise<void>;

/**
 * The start of an operation on a bucket: it refuses what S3 refuses before it looks the bucket up
 * (malformed parameters), and gives back the answer (see checkedInBucket).
 */
export type BucketHandler = (ctx: OperationContext) => OperationHandler;

/** Answers `status` with these headers and no body. */
export function endEmpty(ctx: OperationContext, status: number, headers: Readonly<Record<string, string>> = {}): void {
  const { res } = ctx.exchange;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status !== 204) res.setHeader('Content-Length', 0);
  res.end();
}

/** Throws NoSuchBucket unless the request's bucket exists; gives its name. */
export async function requireBucket(ctx: OperationContext): Promise<string> {
  const name = ctx.target.bucket!;
  if (!(await ctx.storage.bucketExists(name))) throw new GatewayError(errors.noSuchBucket(name));
  return name;
}

/**
 * An operation answered in a bucket that exists: NoSuchBucket first, as S3 answers every operation on a missing bucket.
 */
export function inBucket(answer: OperationHandler): OperationHandler {
  return async (ctx) => {
    await requireBucket(ctx);
    await answer(ctx);
  };
}

/**
 * An operation whose parameters are checked before the bucket is looked up (`start`), then answered in a bucket that
 * exists.
 */
export function checkedInBucket(start: BucketHandler): OperationHandler {
  return async (ctx) => {
    const answer = start(ctx);
    await requireBucket(ctx);
    await answer(ctx);
  };
}

/** Throws NoSuchUpload unless `uploadId` is an upload in progress for exactly this bucket and key. */
export async function requireUpload(ctx: OperationContext): Promise<string> {
  const { bucket, key, query } = ctx.target;
  const uploadId = validateUploadId(singleParam(query, 'uploadId'));
  const startedFor = await ctx.storage.uploadKey(bucket!, uploadId);
  if (startedFor === null || startedFor !== key) throw new GatewayError(errors.noSuchUpload());
  return uploadId;
}

/**
 * What the request's key reaches of its bucket, as the prefix of those object keys ('' for all;
 * see bucket-directory.ts): listings and DeleteObjects keep to it. Null when it reaches none,
 * which the gateway refuses before any operation runs.
 */
export function reachOf(ctx: OperationContext): string | null {
  return ctx.buckets.reachOf(ctx.target.bucket!, ctx.key);
}
