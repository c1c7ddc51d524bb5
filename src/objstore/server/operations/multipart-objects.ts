/** The reads of a completed multipart object's parts (multipart-layout.ts): GetObject / HeadObject `?partNumber=N`. */
import { checksumHeaderName } from '../../checksum-algorithms.ts';
import { answersStoredChecksum } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { hasParam, singleParam, validatePartNumber } from '../target.ts';
import type { BucketHandler, OperationContext, OperationHandler } from './context.ts';
import { layoutOf, type MultipartLayout } from './multipart-layout.ts';

/** The byte range of part `partNumber` (1-based, in part order) and the object's part count. */
function partRange(
  layout: MultipartLayout | null,
  size: number,
  partNumber: number,
): { start: number; end: number; count: number } {
  const sizes = layout === null ? [size] : layout.parts.map((part) => part.size);
  if (partNumber > sizes.length) throw new GatewayError(errors.partNumberNotSatisfiable());
  const start = sizes.slice(0, partNumber - 1).reduce((sum, partSize) => sum + partSize, 0);
  return { start, end: start + sizes[partNumber - 1]! - 1, count: sizes.length };
}

/**
 * GetObject / HeadObject with `?partNumber=N`: the part's bytes as a 206 with their Content-Range,
 * and for a multipart object its part count in `x-amz-mp-parts-count` (and with checksum mode,
 * the part's checksum). An object put in one piece is its own part 1. The request goes on to
 * `serve` (the read without parts) as a request for the part's byte range.
 */
async function readObjectPart(ctx: OperationContext, partNumber: number, serve: OperationHandler): Promise<void> {
  const { bucket, key } = ctx.target;
  const { req, res } = ctx.exchange;
  const metadata = await ctx.storage.headObject(bucket!, key!);
  if (metadata === null) return serve(ctx);

  const layout = layoutOf(metadata);
  const { start, end, count } = partRange(layout, Number(metadata['content-length']), partNumber);
  if (layout !== null) {
    res.setHeader('x-amz-mp-parts-count', count);
    const checksum = layout.parts[partNumber - 1]!.checksum;
    if (checksum !== null && layout.checksum !== null && answersStoredChecksum(req.headers)) {
      res.setHeader(checksumHeaderName(layout.checksum.algorithm), checksum);
    }
  }
  // An empty object has no byte to range over: it is answered whole.
  if (end >= start) req.headers.range = `bytes=${start}-${end}`;
  await serve(ctx);
}

/**
 * A read with `?partNumber=` becomes a ranged read, served as `serve` serves reads; its part
 * number is checked before the bucket is looked up, as S3 checks it.
 */
export function readPartsBefore(serve: OperationHandler): BucketHandler {
  return (ctx) => {
    const { query } = ctx.target;
    if (!hasParam(query, 'partNumber')) return serve;
    if (ctx.exchange.req.headers.range !== undefined) throw new GatewayError(errors.rangeAndPartNumber());
    const partNumber = validatePartNumber(singleParam(query, 'partNumber'));
    return () => readObjectPart(ctx, partNumber, serve);
  };
}
