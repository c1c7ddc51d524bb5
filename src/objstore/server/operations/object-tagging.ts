/**
 * PutObjectTagging, its body read by the gateway so that it is checked against the payload hash
 * signed, as every body the gateway acts on (s3rver would read and store any body). The tags are
 * kept where s3rver keeps them, so GetObjectTagging stays s3rver's.
 */
import { errors } from '../errors.ts';
import { GatewayError } from '../../s3-errors.ts';
import { parseRequestDocument } from '../xml.ts';
import type { OperationOverride } from './context.ts';

/** S3 takes at most 10 tags of 128-character keys and 256-character values: a few KiB. */
const MAX_TAGGING_BYTES = 64 * 1024;

export const putObjectTagging: OperationOverride = async (ctx) => {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  if (!(await ctx.storage.objectExists(bucket, key))) throw new GatewayError(errors.noSuchKey(key));
  const tagging = (await ctx.readBody(MAX_TAGGING_BYTES)).toString('utf8');
  parseRequestDocument(tagging, 'Tagging');
  await ctx.storage.putObjectTagging(bucket, key, tagging);
  const { res } = ctx.exchange;
  res.statusCode = 200;
  res.setHeader('Content-Length', 0);
  res.end();
};
