/**
 * DeleteObjects, answered by the gateway: s3rver maps the body's keys straight onto paths
 * (a `..` segment would reach outside the bucket), ignores `Quiet` and never reports an error.
 */
import { errors, GatewayError } from '../errors.ts';
import type { OperationContext } from './context.ts';
import { element, sendXmlResult } from './result-xml.ts';
import { validateObjectKey } from '../target.ts';
import { decodeXmlText } from './xml-text.ts';

/** S3 takes up to 1,000 keys a request; the body of that many long keys stays well under this. */
const MAX_DELETE_BODY_BYTES = 2 * 1024 * 1024;
const MAX_KEYS = 1000;

interface DeleteRequest {
  keys: string[];
  quiet: boolean;
}

export function parseDeleteRequest(xml: string): DeleteRequest {
  if (!/<Delete[\s>]/.test(xml) || !/<\/Delete>/.test(xml)) throw new GatewayError(errors.malformedXml());
  const keys: string[] = [];
  for (const match of xml.matchAll(/<Object(?:\s[^>]*)?>([\s\S]*?)<\/Object>/g)) {
    const key = /<Key>([\s\S]*?)<\/Key>/.exec(match[1]!)?.[1];
    if (key === undefined) throw new GatewayError(errors.malformedXml());
    keys.push(decodeXmlText(key));
  }
  if (keys.length === 0 || keys.length > MAX_KEYS) throw new GatewayError(errors.malformedXml());
  return { keys, quiet: /<Quiet>\s*true\s*<\/Quiet>/i.test(xml) };
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
  // s3rver answers NoSuchBucket itself.
  if (!(await storage.bucketExists(bucket))) return ctx.delegate();
  const { keys, quiet } = parseDeleteRequest((await ctx.readBody(MAX_DELETE_BODY_BYTES)).toString('utf8'));
  for (const key of keys) {
    if (isStorableKey(key) && (await storage.objectExists(bucket, key))) await storage.deleteObject(bucket, key);
  }
  // As on S3, deleting a key that does not exist succeeds.
  const deleted = quiet ? '' : keys.map((key) => `<Deleted>${element('Key', key)}</Deleted>`).join('');
  sendXmlResult(ctx.exchange.res, 'DeleteResult', deleted);
}
