/**
 * Bucket operations as S3 answers them on its us-east-1 endpoint: CreateBucket, DeleteBucket,
 * HeadBucket, GetBucketLocation, GetBucketVersioning and ListBuckets. Who owns what is
 * bucket-directory.ts's; this is the HTTP side.
 */
import { accountOf, canonicalIdOf, isCreatableBucketName, isValidLocationConstraint } from '../../bucket-directory.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { singleParam } from '../target.ts';
import { childText, parseRequestDocument, sendXmlResult } from '../xml.ts';
import { endEmpty, requireBucket, type OperationHandler } from './context.ts';
import { continuationToken, resumeAfter } from './listing.ts';
import { itemsOf, pageOf, parseIntegerParam } from './paging.ts';
import { ownerContent, s3Timestamp } from './result-xml.ts';

/** A CreateBucketConfiguration body is a few hundred bytes. */
const MAX_CONFIGURATION_BYTES = 64 * 1024;

/**
 * The LocationConstraint of a CreateBucket body: null for no body, no constraint or an empty
 * one (us-east-1); MalformedXML for a document that is not well-formed or not a
 * CreateBucketConfiguration.
 */
export function parseLocationConstraint(body: string): string | null {
  if (body.trim() === '') return null;
  const configuration = parseRequestDocument(body, 'CreateBucketConfiguration');
  if (configuration['LocationConstraint'] === undefined) return null;
  const constraint = childText(configuration, 'LocationConstraint')?.trim();
  if (constraint === undefined) throw new GatewayError(errors.malformedXml());
  if (constraint === '') return null;
  if (!isValidLocationConstraint(constraint)) throw new GatewayError(errors.invalidLocationConstraint(constraint));
  return constraint;
}

export const createBucket: OperationHandler = async (ctx) => {
  const name = ctx.target.bucket!;
  if (!isCreatableBucketName(name)) throw new GatewayError(errors.invalidBucketName(name));
  const constraint = parseLocationConstraint((await ctx.readBody(MAX_CONFIGURATION_BYTES)).toString('utf8'));
  const outcome = ctx.buckets.create(name, ctx.key!, constraint);
  if (outcome === 'ownedByCaller') throw new GatewayError(errors.bucketAlreadyOwnedByYou(name));
  if (outcome === 'ownedByOther') throw new GatewayError(errors.bucketAlreadyExists(name));
  await ctx.storage.createBucket(name);
  endEmpty(ctx, 200, { Location: `/${name}` });
};

/** The configured buckets are every workspace's: no one account may delete them. */
export const deleteBucket: OperationHandler = async (ctx) => {
  const name = ctx.target.bucket!;
  if (ctx.buckets.isConfigured(name)) throw new GatewayError(errors.accessDenied());
  await requireBucket(ctx);
  if (await ctx.storage.hasObjects(name)) throw new GatewayError(errors.bucketNotEmpty(name));
  ctx.buckets.remove(name);
  // Uploads in progress go with the bucket, as on S3.
  await ctx.storage.deleteBucket(name);
  endEmpty(ctx, 204);
};

/** The gateway has set `x-amz-bucket-region` already (it is there on a refusal too). */
export const headBucket: OperationHandler = async (ctx) => {
  endEmpty(ctx, 200, { 'Content-Type': 'application/xml', 'x-amz-access-point-alias': 'false' });
};

/** An empty LocationConstraint is us-east-1, as S3 answers it. */
export const getBucketLocation: OperationHandler = async (ctx) => {
  sendXmlResult(ctx.exchange.res, 'LocationConstraint', {
    '#text': ctx.buckets.locationConstraintOf(ctx.target.bucket!) ?? '',
  });
};

/** The objstore's buckets never have versioning: S3 answers such a bucket's configuration empty, with no Status. */
export const getBucketVersioning: OperationHandler = async (ctx) => {
  sendXmlResult(ctx.exchange.res, 'VersioningConfiguration', {});
};

/** S3's page size when a client pages without `max-buckets`, and the most one page holds. */
const MAX_BUCKETS = 10000;

/**
 * ListBuckets: the configured buckets and the caller's own, by name, paged by `max-buckets` and an opaque continuation
 * token.
 */
export const listBuckets: OperationHandler = async (ctx) => {
  const { query } = ctx.target;
  const maxBuckets = parseIntegerParam(query, 'max-buckets', MAX_BUCKETS);
  if (maxBuckets < 1 || maxBuckets > MAX_BUCKETS) {
    throw new GatewayError(errors.invalidMaxBuckets(MAX_BUCKETS));
  }
  const key = ctx.key!;
  const ownerId = canonicalIdOf(accountOf(key));
  // Tokens are bound to the account, so one account's token does not page another's list.
  const token = singleParam(query, 'continuation-token') || undefined;
  const prefix = singleParam(query, 'prefix');
  const region = singleParam(query, 'bucket-region');
  const visible = ctx.buckets
    .visibleTo(key)
    .filter((bucket) => region === undefined || bucket.region === region)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = pageOf(visible, (bucket) => bucket.name, {
    prefix: prefix ?? '',
    delimiter: '',
    marker: token === undefined ? '' : resumeAfter(ownerId, token),
    limit: maxBuckets,
  });
  const listed = await Promise.all(
    itemsOf(page).map(async (bucket) => ({
      ...bucket,
      createdAt:
        bucket.createdAt === null ? await ctx.storage.bucketCreationDate(bucket.name) : new Date(bucket.createdAt),
    })),
  );
  const last = page.entries.at(-1);
  sendXmlResult(ctx.exchange.res, 'ListAllMyBucketsResult', {
    Owner: ownerContent(ownerId),
    Buckets: {
      Bucket: listed.map((bucket) => ({
        Name: bucket.name,
        CreationDate: bucket.createdAt === null ? undefined : s3Timestamp(bucket.createdAt),
        BucketRegion: bucket.region,
      })),
    },
    ContinuationToken: page.isTruncated && last ? continuationToken(ownerId, last.name) : undefined,
    Prefix: prefix,
  });
};
