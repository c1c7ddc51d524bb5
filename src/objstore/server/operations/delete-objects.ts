/** DeleteObjects, answered by the gateway: s3rver ignores `Quiet` and never reports an error. */
import { errors } from '../errors.ts';
import { GatewayError } from '../../s3-errors.ts';
import { reachOf, type OperationContext } from './context.ts';
import { validateObjectKey } from '../target.ts';
import { childElements, childText, parseRequestDocument, sendXmlResult } from '../xml.ts';

/** S3 takes up to 1,000 keys a request; the body of that many long keys stays well under this. */
const MAX_DELETE_BODY_BYTES = 2 * 1024 * 1024;
const MAX_KEYS = 1000;

interface DeleteRequest {
  keys: string[];
  quiet: boolean;
}

export function parseDeleteRequest(xml: string): DeleteRequest {
  const request = parseRequestDocument(xml, 'Delete', ['Object']);
  const keys = childElements(request, 'Object').map((object) => {
    const key = typeof object === 'string' ? undefined : childText(object, 'Key');
    if (key === undefined) throw new GatewayError(errors.malformedXml());
    return key;
  });
  if (keys.length === 0 || keys.length > MAX_KEYS) throw new GatewayError(errors.malformedXml());
  return { keys, quiet: childText(request, 'Quiet')?.trim().toLowerCase() === 'true' };
}

/** Whether the store can hold the key at all: one it cannot hold was never written, so deleting it is a no-op. */
function isStorableKey(key: string): boolean {
  try {
    validateObjectKey(key);
    return true;
  } catch {
    return false;
  }
}

export async function deleteObjects(ctx: OperationContext): Promise<void> {
  const bucket = ctx.target.bucket!;
  const { storage } = ctx;
  const { keys, quiet } = parseDeleteRequest((await ctx.readBody(MAX_DELETE_BODY_BYTES)).toString('utf8'));
  const reach = reachOf(ctx);
  const inReach = (key: string) => reach !== null && key.startsWith(reach);
  const reachable = keys.filter(inReach);
  const refused = keys.filter((key) => !inReach(key));
  for (const key of reachable) {
    if (isStorableKey(key) && (await storage.objectExists(bucket, key))) await storage.deleteObject(bucket, key);
  }
  // As on S3, deleting a key that does not exist succeeds; a key out of reach is an error of its own, Quiet or not.
  const denied = errors.accessDenied();
  sendXmlResult(ctx.exchange.res, 'DeleteResult', {
    Deleted: quiet ? [] : reachable.map((key) => ({ Key: key })),
    Error: refused.map((key) => ({ Key: key, Code: denied.code, Message: denied.message })),
  });
}
