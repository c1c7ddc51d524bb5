/**
 * CopyObject: an object copied whole from the source `x-amz-copy-source` names (`?versionId=null`
 * after it names its one version), under the source's `x-amz-copy-source-if-*` conditions
 * (preconditions.ts). The copy has the source's ETag, checksum and parts (multipart-layout.ts),
 * whatever the directive: they describe the bytes. Its headers are the source's, or with
 * `x-amz-metadata-directive: REPLACE` the request's (stored-headers.ts); its tags the source's,
 * or none with `x-amz-tagging-directive: REPLACE`. A copy onto itself must REPLACE, as on S3.
 */
import type { IncomingHttpHeaders } from 'node:http';

import { receiveStream, type IncomingContent, type ObjectHead } from '../../storage/storage.ts';
import { pickChecksumHeaders } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { parseCopySource } from '../target.ts';
import { sendXmlResult } from '../xml.ts';
import { requireCopySourceConditionsMet } from './conditional-operations.ts';
import type { BucketHandler, OperationContext } from './context.ts';
import { layoutMetadata, layoutOf } from './multipart-layout.ts';
import { s3Timestamp } from './result-xml.ts';
import { requireRedirectLocation, storedHeaders } from './stored-headers.ts';
import { requireNullVersion } from './versions.ts';

/** What HeadObject adds to the stored metadata. */
const INTRINSIC = new Set(['etag', 'last-modified', 'content-length']);

/** The metadata stored with an object, from what HeadObject shows of it. */
function storedMetadataOf(head: ObjectHead): Record<string, string> {
  return Object.fromEntries(
    Object.entries(head).flatMap(([name, value]) =>
      INTRINSIC.has(name) || value === undefined ? [] : [[name, String(value)]],
    ),
  );
}

/** What describes the bytes rather than the request that wrote them: the checksum and the parts. */
function contentMetadataOf(head: ObjectHead): Record<string, string> {
  const layout = layoutOf(head);
  return { ...pickChecksumHeaders(head), ...(layout === null ? {} : layoutMetadata(layout)) };
}

const directive = (headers: IncomingHttpHeaders, name: string) => headers[name] === 'REPLACE';

/** Receives the source's bytes as new content; NoSuchKey when the source went meanwhile. */
async function copyContent(ctx: OperationContext, bucket: string, key: string): Promise<IncomingContent> {
  try {
    return await receiveStream(ctx.storage, ctx.storage.readObject(bucket, key, null));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new GatewayError(errors.noSuchKey(key));
    throw err;
  }
}

/** The request's headers are checked before the bucket is looked up. */
export const copyObject: BucketHandler = (ctx) => {
  const { headers } = ctx.exchange.req;
  const source = parseCopySource(headers)!;
  requireNullVersion('x-amz-copy-source', source.versionId);
  requireRedirectLocation(headers);
  const replaced = directive(headers, 'x-amz-metadata-directive') ? storedHeaders(ctx, headers) : null;
  return async () => {
    const { storage } = ctx;
    const bucket = ctx.target.bucket!;
    const key = ctx.target.key!;
    if (!(await storage.bucketExists(source.bucket))) throw new GatewayError(errors.noSuchBucket(source.bucket));
    const head = await storage.headObject(source.bucket, source.key);
    if (head === null) throw new GatewayError(errors.noSuchKey(source.key));
    await requireCopySourceConditionsMet(ctx);
    if (source.bucket === bucket && source.key === key && replaced === null)
      throw new GatewayError(errors.copyOntoItself());

    const tags = directive(headers, 'x-amz-tagging-directive')
      ? null
      : await storage.objectTagging(source.bucket, source.key);
    const metadata = replaced === null ? storedMetadataOf(head) : { ...replaced, ...contentMetadataOf(head) };
    const content = await copyContent(ctx, source.bucket, source.key);
    await storage.placeObject(bucket, key, content, String(head['etag']).replace(/"/g, ''), metadata);
    if (tags !== null) await storage.putObjectTagging(bucket, key, tags);

    const placed = await storage.headObject(bucket, key);
    sendXmlResult(ctx.exchange.res, 'CopyObjectResult', {
      LastModified: s3Timestamp(new Date(String(placed?.['last-modified'] ?? new Date().toUTCString()))),
      ETag: String(head['etag']),
    });
  };
};
