/**
 * DeleteObject and DeleteObjects, with `Quiet`, version ids (`null` alone) and per-key errors as
 * S3 answers them. The storage removes an object's files and folders in one synchronous step,
 * which no placement of another object can interleave with.
 */
import { errors, GatewayError } from '../../s3-errors.ts';
import { reachOf, type BucketHandler, type OperationContext } from './context.ts';
import { validateObjectKey } from '../target.ts';
import { childElements, childText, parseRequestDocument, sendXmlResult, type XmlContent } from '../xml.ts';
import { NULL_VERSION_ID, namesNullVersion, versionIdProblem } from './versions.ts';

/** S3 takes up to 1,000 keys a request; the body of that many long keys stays well under this. */
const MAX_DELETE_BODY_BYTES = 2 * 1024 * 1024;
const MAX_KEYS = 1000;

interface ObjectToDelete {
  key: string;
  /** As sent; undefined when the entry names no version. */
  versionId: string | undefined;
}

interface DeleteRequest {
  objects: ObjectToDelete[];
  quiet: boolean;
}

export function parseDeleteRequest(xml: string): DeleteRequest {
  const request = parseRequestDocument(xml, 'Delete', ['Object']);
  const objects = childElements(request, 'Object').map((object) => {
    const key = typeof object === 'string' ? undefined : childText(object, 'Key');
    if (key === undefined) throw new GatewayError(errors.malformedXml());
    return { key, versionId: typeof object === 'string' ? undefined : childText(object, 'VersionId') };
  });
  if (objects.length === 0 || objects.length > MAX_KEYS) throw new GatewayError(errors.malformedXml());
  return { objects, quiet: childText(request, 'Quiet')?.trim().toLowerCase() === 'true' };
}

/** Whether the storage can hold the key at all: one it cannot hold was never written, so deleting it is a no-op. */
function isStorableKey(key: string): boolean {
  try {
    validateObjectKey(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * DeleteObject: 204 whether or not the key held an object, as on S3. `versionId=null` deletes the
 * object too, and the answer names the version deleted.
 */
export const deleteObject: BucketHandler = (ctx) => {
  const namesVersion = namesNullVersion(ctx.target.query);
  return async () => {
    await ctx.storage.deleteObject(ctx.target.bucket!, ctx.target.key!);
    const { res } = ctx.exchange;
    res.statusCode = 204;
    if (namesVersion) res.setHeader('x-amz-version-id', NULL_VERSION_ID);
    res.end();
  };
};

export async function deleteObjects(ctx: OperationContext): Promise<void> {
  const bucket = ctx.target.bucket!;
  const { objects, quiet } = parseDeleteRequest((await ctx.readBody(MAX_DELETE_BODY_BYTES)).toString('utf8'));
  const reach = reachOf(ctx);
  const deleted: XmlContent[] = [];
  const failed: XmlContent[] = [];
  // As on S3, deleting a key that does not exist succeeds; a key out of reach or a version the
  // bucket cannot have is an error of its own, Quiet or not.
  for (const { key, versionId } of objects) {
    const failure =
      reach === null || !key.startsWith(reach) ? errors.accessDenied() : versionIdProblem('versionId', versionId);
    if (failure !== null) {
      failed.push({ Key: key, VersionId: versionId, Code: failure.code, Message: failure.message });
      continue;
    }
    if (isStorableKey(key)) await ctx.storage.deleteObject(bucket, key);
    if (!quiet) deleted.push({ Key: key, VersionId: versionId });
  }
  sendXmlResult(ctx.exchange.res, 'DeleteResult', { Deleted: deleted, Error: failed });
}
