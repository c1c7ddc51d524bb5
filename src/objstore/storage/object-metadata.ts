/**
 * The metadata an object keeps of the headers it was put with (and that HeadObject and GetObject
 * answer again): the selection s3rver 3.7.1 made (lib/models/object.js, S3Object), which the
 * `._S3rver_metadata.json` of every data dir written so far holds, so that what is stored and
 * answered stays the same whichever storage keeps it.
 */
import { errors, GatewayError } from '../s3-errors.ts';

/** The headers kept, in the order they are stored. */
const KEPT_HEADERS = [
  'cache-control',
  'content-disposition',
  'content-encoding',
  'content-language',
  'content-type',
  'expires',
  'x-amz-storage-class',
  'x-amz-website-redirect-location',
  // What a stored object's own head holds (a request's Content-Length included, as s3rver kept it).
  'last-modified',
  'etag',
  'content-length',
] as const;

export const STORAGE_CLASSES: readonly string[] = [
  'STANDARD',
  'REDUCED_REDUNDANCY',
  'STANDARD_IA',
  'ONEZONE_IA',
  'INTELLIGENT_TIERING',
  'GLACIER',
  'DEEP_ARCHIVE',
  'OUTPOSTS',
];

/** The content type of an object put without one. */
export const DEFAULT_CONTENT_TYPE = 'binary/octet-stream';

const USER_METADATA_PREFIX = 'x-amz-meta-';

/**
 * The metadata kept for an object put with these request headers (or read back from a stored
 * head): the kept headers given, in that order, `content-type` defaulting to
 * binary/octet-stream, then every `x-amz-meta-*` header in the order given. An
 * `x-amz-storage-class` S3 does not know is thrown as InvalidStorageClass (400).
 */
export function objectMetadata(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  if ('x-amz-storage-class' in headers && !STORAGE_CLASSES.includes(headers['x-amz-storage-class'] as string)) {
    throw new GatewayError(errors.invalidStorageClass());
  }
  const metadata: Record<string, unknown> = {};
  for (const name of KEPT_HEADERS) if (name in headers) metadata[name] = headers[name];
  if (!metadata['content-type']) metadata['content-type'] = DEFAULT_CONTENT_TYPE;
  for (const [name, value] of Object.entries(headers))
    if (name.startsWith(USER_METADATA_PREFIX)) metadata[name] = value;
  return metadata as Record<string, string>;
}
