/**
 * An object's tags: PutObjectTagging (its body read by the gateway, so that it is checked against
 * the payload hash signed, as every body the gateway acts on), GetObjectTagging and
 * DeleteObjectTagging. The storage keeps a Tagging document; tags written by s3rver (an indented
 * copy of the document, its texts unescaped) read back the same.
 */
import { errors, GatewayError } from '../../s3-errors.ts';
import { childElements, childText, parseRequestDocument, sendXmlResult } from '../xml.ts';
import { endEmpty, type OperationContext, type OperationHandler } from './context.ts';

/** S3 takes at most 10 tags of 128-character keys and 256-character values: a few KiB. */
const MAX_TAGGING_BYTES = 64 * 1024;

const NO_TAGS = '<Tagging><TagSet></TagSet></Tagging>';

async function requireObject(ctx: OperationContext): Promise<{ bucket: string; key: string }> {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  if (!(await ctx.storage.objectExists(bucket, key))) throw new GatewayError(errors.noSuchKey(key));
  return { bucket, key };
}

export const putObjectTagging: OperationHandler = async (ctx) => {
  const { bucket, key } = await requireObject(ctx);
  const tagging = (await ctx.readBody(MAX_TAGGING_BYTES)).toString('utf8');
  parseRequestDocument(tagging, 'Tagging');
  await ctx.storage.putObjectTagging(bucket, key, tagging);
  endEmpty(ctx, 200);
};

/** A `&` that starts no reference: s3rver wrote texts unescaped. */
const BARE_AMPERSAND = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/g;

/** The tags of a kept Tagging document, in order, their texts trimmed (as s3rver kept them). */
function tagsOf(document: string): { Key: string; Value: string }[] {
  let tagging;
  try {
    tagging = parseRequestDocument(document.replace(BARE_AMPERSAND, '&amp;'), 'Tagging', ['Tag'], { trim: true });
  } catch {
    return [];
  }
  const tagSet = tagging['TagSet'];
  if (tagSet === undefined || typeof tagSet === 'string' || Array.isArray(tagSet)) return [];
  return childElements(tagSet, 'Tag').flatMap((tag) =>
    typeof tag === 'string' ? [] : [{ Key: childText(tag, 'Key') ?? '', Value: childText(tag, 'Value') ?? '' }],
  );
}

export const getObjectTagging: OperationHandler = async (ctx) => {
  const { bucket, key } = await requireObject(ctx);
  const tags = tagsOf((await ctx.storage.objectTagging(bucket, key)) ?? NO_TAGS);
  sendXmlResult(ctx.exchange.res, 'Tagging', { TagSet: { Tag: tags } });
};

/** Leaves the object without tags: 204, as S3 answers. */
export const deleteObjectTagging: OperationHandler = async (ctx) => {
  const { bucket, key } = await requireObject(ctx);
  await ctx.storage.putObjectTagging(bucket, key, NO_TAGS);
  endEmpty(ctx, 204);
};
