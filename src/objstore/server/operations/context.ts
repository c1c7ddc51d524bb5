/** What an operation the gateway handles itself is given, and the checks several of them share. */
import type { BucketDirectory } from '../../bucket-directory.ts';
import type { ObjstoreStorage } from '../../storage/storage.ts';
import type { ObjstoreKey } from '../../types.ts';
import type { ChunkSignatures } from '../auth/sigv4.ts';
import { errors } from '../errors.ts';
import { GatewayError } from '../../s3-errors.ts';
import type { Exchange } from '../exchange.ts';
import { singleParam, validateUploadId, type RequestTarget } from '../target.ts';
import type { TurnTaking } from '../turn-taking.ts';

export interface OperationContext {
  readonly exchange: Exchange;
  readonly target: RequestTarget;
  readonly storage: ObjstoreStorage;
  readonly buckets: BucketDirectory;
  /** The key that signed the request; null for an unsigned one. */
  readonly key: ObjstoreKey | null;
  /**
   * The payload hash the request's signature holds its body to (a hex SHA-256, UNSIGNED-PAYLOAD or
   * STREAMING-*; see signature.ts); null for an unsigned request or a browser form.
   */
  readonly payloadHash: string | null;
  /** The chunk signatures of an aws-chunked body with signed chunks, to check while decoding it. */
  readonly chunkSignatures: ChunkSignatures;
  /** Hands the request to s3rver (first sending 100 Continue if the client is waiting for it). */
  delegate(): void;
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

/** Handles an operation; throw a GatewayError to answer with an S3 error. */
export type OperationOverride = (ctx: OperationContext) => Promise<void>;

/**
 * The start of an operation the gateway answers only in a bucket that exists: it refuses what S3
 * refuses before it looks the bucket up (malformed parameters), and gives back the answer.
 */
export type BucketOverride = (ctx: OperationContext) => OperationOverride;

/** How the gateway answers an operation itself: compat.ts has one for every operation it overrides. */
export type Override =
  /** Answers every request of the operation (handing it to s3rver, ctx.delegate, where it chooses). */
  | { readonly always: OperationOverride }
  /**
   * Answers in a bucket that exists. The gateway hands a request for a missing bucket to s3rver,
   * whose NoSuchBucket (status, error document, headers) is S3's, once the check has passed.
   */
  | { readonly inBucket: BucketOverride };

/**
 * Throws NoSuchUpload unless `uploadId` is an upload in progress for exactly this bucket and key
 * (s3rver itself would create the upload directory on UploadPart, and complete an upload under
 * the key it was started with whatever key the request names).
 */
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
