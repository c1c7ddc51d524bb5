/**
 * GetBucketAcl and GetObjectAcl: what S3 answers for a bucket or object whose ACL was never
 * changed (the objstore takes no other): its owner, the account owning the bucket as listings name
 * it, with FULL_CONTROL. Setting an ACL is not emulated (PutObjectAcl is NotImplemented,
 * PutBucketAcl refused as every bucket configuration is).
 */
import { errors, GatewayError } from '../../s3-errors.ts';
import { sendXmlResult } from '../xml.ts';
import type { OperationContext, OperationHandler } from './context.ts';
import { bucketOwnerContent } from './result-xml.ts';

function sendOwnerAcl(ctx: OperationContext): void {
  const owner = bucketOwnerContent(ctx.buckets, ctx.target.bucket!);
  sendXmlResult(ctx.exchange.res, 'AccessControlPolicy', {
    Owner: owner,
    AccessControlList: {
      Grant: {
        Grantee: { '@xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance', '@xsi:type': 'CanonicalUser', ...owner },
        Permission: 'FULL_CONTROL',
      },
    },
  });
}

export const getBucketAcl: OperationHandler = async (ctx) => sendOwnerAcl(ctx);

export const getObjectAcl: OperationHandler = async (ctx) => {
  const { bucket, key } = ctx.target;
  if (!(await ctx.storage.objectExists(bucket!, key!))) throw new GatewayError(errors.noSuchKey(key!));
  sendOwnerAcl(ctx);
};
