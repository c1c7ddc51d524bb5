/** Parts that several S3 result documents share. */
import { canonicalIdOf, type BucketDirectory } from '../../bucket-directory.ts';
import type { XmlContent } from '../xml.ts';
import type { NameEncoder } from './paging.ts';

/** A listing's common prefixes, each in its own `<CommonPrefixes>` as S3 writes them. */
export function commonPrefixes(prefixes: readonly string[], encode: NameEncoder): XmlContent[] {
  return prefixes.map((prefix) => ({ Prefix: encode(prefix) }));
}

/**
 * The content of `<Owner>` (or `<Initiator>`): an account, by its canonical user id. S3 no
 * longer sends a DisplayName beside it (not since November 2025).
 */
export function ownerContent(canonicalId: string): XmlContent {
  return { ID: canonicalId };
}

/** `<Owner>` of what a bucket holds (objects, uploads): the account owning the bucket. */
export function bucketOwnerContent(buckets: BucketDirectory, bucket: string): XmlContent {
  return ownerContent(canonicalIdOf(buckets.ownerOf(bucket) ?? null));
}

/** S3's timestamps: ISO 8601 in UTC, to the whole second (S3 keeps no milliseconds). */
export function s3Timestamp(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString();
}
