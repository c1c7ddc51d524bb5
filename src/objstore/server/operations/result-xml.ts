/** Parts that several S3 result documents share. */
import { createHash } from 'node:crypto';

import type { XmlContent } from '../xml.ts';
import type { NameEncoder } from './paging.ts';

/** A listing's common prefixes, each in its own `<CommonPrefixes>` as S3 writes them. */
export function commonPrefixes(prefixes: readonly string[], encode: NameEncoder): XmlContent[] {
  return prefixes.map((prefix) => ({ Prefix: encode(prefix) }));
}

/**
 * The account that owns every bucket and initiates every upload here, named by a canonical user
 * id in S3's shape (64 hex digits). S3 no longer sends a DisplayName beside it.
 */
const OWNER_ID = createHash('sha256').update('localplane objstore owner').digest('hex');

/** The content of `<Owner>` (or `<Initiator>`): the owning account. */
export const OWNER: XmlContent = { ID: OWNER_ID };

/** S3's timestamps: ISO 8601 in UTC, to the whole second (S3 keeps no milliseconds). */
export function s3Timestamp(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString();
}
