/** The conditions of writes and copies, checked against the objects in the storage (preconditions.ts has the rules). */
import { parseCopySource } from '../target.ts';
import type { OperationContext } from './context.ts';
import { readStoredObject } from './object-reads.ts';
import {
  hasCopySourceConditions,
  hasWriteConditions,
  requireCopySourceConditions,
  requireWriteConditions,
} from './preconditions.ts';

/**
 * PutObject / CompleteMultipartUpload: throws 412 or 404 NoSuchKey unless the object under the key meets If-Match /
 * If-None-Match.
 */
export async function requireWriteConditionsMet(ctx: OperationContext): Promise<void> {
  const { headers } = ctx.exchange.req;
  if (!hasWriteConditions(headers)) return;
  const { bucket, key } = ctx.target;
  const current = await readStoredObject(ctx.storage, bucket!, key!);
  requireWriteConditions(headers, key!, current?.state ?? null);
}

/**
 * Places an object (`place`) only if the key still meets the write conditions, checked again now
 * that the body has arrived: conditional writes of one key take turns from that check to their
 * placing, so of two `If-None-Match: *` uploads of a new key only one succeeds, as on S3.
 */
export async function placeUnderWriteConditions(ctx: OperationContext, place: () => Promise<void>): Promise<void> {
  if (!hasWriteConditions(ctx.exchange.req.headers)) return place();
  const { bucket, key } = ctx.target;
  await ctx.conditionalWrites.run(`${bucket}/${key}`, async () => {
    await requireWriteConditionsMet(ctx);
    await place();
  });
}

/**
 * CopyObject and UploadPartCopy: throws 412 unless the source (when it exists) meets every `x-amz-copy-source-if-*`
 * condition.
 */
export async function requireCopySourceConditionsMet(ctx: OperationContext): Promise<void> {
  const { headers } = ctx.exchange.req;
  const source = parseCopySource(headers);
  if (source === null || !hasCopySourceConditions(headers)) return;
  const current = await readStoredObject(ctx.storage, source.bucket, source.key);
  if (current !== null) requireCopySourceConditions(headers, current.state, ctx.now());
}
