/** The conditions of writes and copies, checked against the objects in the store (preconditions.ts has the rules). */
import type { OperationContext } from './compat.ts';
import { readStoredObject } from './object-reads.ts';
import {
  hasCopySourceConditions,
  hasWriteConditions,
  requireCopySourceConditions,
  requireWriteConditions,
} from './preconditions.ts';
import { parseCopySource } from './target.ts';

/** PutObject / CompleteMultipartUpload: throws 412 or 404 NoSuchKey unless the object under the key meets If-Match / If-None-Match. */
export async function requireWriteConditionsMet(ctx: OperationContext): Promise<void> {
  const { headers } = ctx.exchange.req;
  if (!hasWriteConditions(headers)) return;
  const { bucket, key } = ctx.target;
  const current = await readStoredObject(ctx.backend.store, bucket!, key!);
  requireWriteConditions(headers, key!, current?.state ?? null);
}

/**
 * CopyObject: throws 412 unless the source meets every `x-amz-copy-source-if-*` condition.
 * A source that does not exist is left to s3rver, which answers NoSuchBucket / NoSuchKey.
 */
export async function requireCopySourceConditionsMet(ctx: OperationContext): Promise<void> {
  const { headers } = ctx.exchange.req;
  const source = parseCopySource(headers);
  if (source === null || !hasCopySourceConditions(headers)) return;
  const current = await readStoredObject(ctx.backend.store, source.bucket, source.key);
  if (current !== null) requireCopySourceConditions(headers, current.state, ctx.now());
}
