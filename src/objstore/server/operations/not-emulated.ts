/**
 * What the objstore does not emulate, answered as S3 answers it. A bucket's configuration can be
 * set only for CORS (classify.ts refuses the rest), so a bucket never has a policy, tags, a
 * lifecycle, a website, replication or Object Lock: reading one is S3's answer for a bucket
 * without it. Other operations are 501 NotImplemented, and a subresource with no operation for
 * the method 405 MethodNotAllowed.
 */
import { errors, GatewayError, type S3ErrorSpec } from '../../s3-errors.ts';
import { requireBucket, type OperationHandler } from './context.ts';

const answer =
  (error: (bucket: string) => S3ErrorSpec): OperationHandler =>
  async (ctx) => {
    throw new GatewayError(error(ctx.target.bucket!));
  };

/** 501 NotImplemented, worded as s3rver worded it for the subresources it did not emulate either. */
export const notImplemented: OperationHandler = answer(() => errors.notImplemented());

/** A bucket's configuration that can never be set: S3's answer for a bucket without one. */
export const noBucketPolicy = answer(errors.noSuchBucketPolicy);
export const noBucketTagging = answer(errors.noSuchTagSet);
export const noBucketLifecycle = answer(errors.noSuchLifecycleConfiguration);
export const noBucketWebsite = answer(errors.noSuchWebsiteConfiguration);
export const noBucketReplication = answer(errors.noReplicationConfiguration);
export const noObjectLockConfiguration = answer(errors.noObjectLockConfiguration);
/** Retention and legal holds need Object Lock, which no bucket has. */
export const missingObjectLock = answer(() => errors.missingObjectLockConfiguration());

/**
 * A request S3 has no operation for (`Unknown`), in a bucket that exists: 405 MethodNotAllowed
 * for a subresource without an operation for its method (naming both, as s3rver did), else (a
 * POST to an object) NotImplemented.
 */
export const unknownOperation: OperationHandler = async (ctx) => {
  if (ctx.target.bucket !== null) await requireBucket(ctx);
  if (ctx.subresource === null && ctx.target.key !== null) throw new GatewayError(errors.notImplemented());
  throw new GatewayError(
    errors.methodNotAllowed(
      ctx.exchange.method,
      (ctx.subresource ?? (ctx.target.key === null ? 'bucket' : 'object')).toUpperCase(),
    ),
  );
};
