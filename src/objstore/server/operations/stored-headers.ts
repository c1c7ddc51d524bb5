/**
 * The headers an object is stored with, from those of the request that writes it (PutObject,
 * CopyObject with `x-amz-metadata-directive: REPLACE`, CreateMultipartUpload): S3's check of
 * `x-amz-website-redirect-location`, then the storage's selection (s3rver's S3Object kept
 * Content-Type, Cache-Control, Content-Disposition, Content-Encoding, Content-Language, Expires,
 * the storage class and website redirect location, and `x-amz-meta-*`; InvalidStorageClass for a
 * class S3 does not have).
 */
import { errors, GatewayError } from '../../s3-errors.ts';
import type { OperationContext } from './context.ts';

const REDIRECT_LOCATION = /^(https?:\/)?\//;

/** InvalidArgument for an `x-amz-website-redirect-location` that is neither a URL nor a path. */
export function requireRedirectLocation(headers: Readonly<Record<string, unknown>>): void {
  const location = headers['x-amz-website-redirect-location'];
  if (typeof location === 'string' && !REDIRECT_LOCATION.test(location))
    throw new GatewayError(errors.websiteRedirectLocation());
}

/** The metadata the request's object is stored with; its headers' S3 errors thrown. */
export function storedHeaders(
  ctx: OperationContext,
  headers: Readonly<Record<string, unknown>>,
): Record<string, string> {
  requireRedirectLocation(headers);
  return ctx.storage.storedMetadata(ctx.target.bucket!, ctx.target.key!, headers);
}
