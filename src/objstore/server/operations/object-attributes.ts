/**
 * GetObjectAttributes (`GET /<bucket>/<key>?attributes`): the attributes
 * named in `x-amz-object-attributes` (ETag, Checksum, ObjectParts, ObjectSize, StorageClass)
 * as S3's GetObjectAttributesResponse, with Last-Modified. ObjectParts is there for multipart
 * objects only: their part count, and the parts (paged by `x-amz-max-parts` and
 * `x-amz-part-number-marker`) with their checksums when the upload had a checksum algorithm.
 */
import { CHECKSUM_ALGORITHMS, checksumHeaderName } from '../../checksum-algorithms.ts';
import { pickChecksumHeaders } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { sendXmlResult, type XmlContent } from '../xml.ts';
import type { BucketHandler } from './context.ts';
import { checksumElementName } from './multipart-checksums.ts';
import { layoutOf, type MultipartLayout, type ObjectPart } from './multipart-layout.ts';

const ATTRIBUTES = ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] as const;
type Attribute = (typeof ATTRIBUTES)[number];

const MAX_PARTS = 1000;

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** The attributes asked for; S3 reads them case-sensitively. */
function requestedAttributes(value: string | undefined): Set<Attribute> {
  const names = (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new GatewayError(errors.missingObjectAttributes());
  if (names.some((name) => !(ATTRIBUTES as readonly string[]).includes(name))) {
    throw new GatewayError(errors.invalidObjectAttribute());
  }
  return new Set(names as Attribute[]);
}

function nonNegativeHeader(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value.trim())) throw new GatewayError(errors.invalidAttributesHeader(name));
  return Number(value.trim());
}

function checksumContent(metadata: Readonly<Record<string, unknown>>): XmlContent | undefined {
  const stored = pickChecksumHeaders(metadata);
  const algorithm = CHECKSUM_ALGORITHMS.find((candidate) => stored[checksumHeaderName(candidate)] !== undefined);
  if (algorithm === undefined) return undefined;
  return {
    [checksumElementName(algorithm)]: stored[checksumHeaderName(algorithm)]!,
    ChecksumType: stored['x-amz-checksum-type'] ?? 'FULL_OBJECT',
  };
}

function partContent(layout: MultipartLayout, part: ObjectPart): XmlContent {
  return {
    ...(part.checksum === null || layout.checksum === null
      ? {}
      : { [checksumElementName(layout.checksum.algorithm)]: part.checksum }),
    PartNumber: part.number,
    Size: part.size,
  };
}

/** PartsCount, and the parts (a page of them) when the upload had a checksum algorithm. */
function objectPartsContent(layout: MultipartLayout, maxParts: number, marker: number): XmlContent {
  if (layout.checksum === null) return { PartsCount: layout.parts.length };
  const remaining = layout.parts.filter((part) => part.number > marker);
  const page = remaining.slice(0, maxParts);
  return {
    PartsCount: layout.parts.length,
    PartNumberMarker: marker,
    NextPartNumberMarker: page.at(-1)?.number ?? 0,
    MaxParts: maxParts,
    IsTruncated: remaining.length > page.length,
    Part: page.map((part) => partContent(layout, part)),
  };
}

export const getObjectAttributes: BucketHandler = (ctx) => {
  const { req, res } = ctx.exchange;
  const attributes = requestedAttributes(header(req.headers['x-amz-object-attributes']));
  const maxParts = Math.min(
    nonNegativeHeader(header(req.headers['x-amz-max-parts']), 'max-parts', MAX_PARTS),
    MAX_PARTS,
  );
  const marker = nonNegativeHeader(header(req.headers['x-amz-part-number-marker']), 'part-number-marker', 0);
  return async () => {
    const { bucket, key } = ctx.target;
    const metadata = await ctx.storage.headObject(bucket!, key!);
    if (metadata === null) throw new GatewayError(errors.noSuchKey(key!));
    const layout = layoutOf(metadata);
    const content: Record<Attribute, () => XmlContent[string]> = {
      ETag: () => String(metadata['etag']).replace(/"/g, ''),
      Checksum: () => checksumContent(metadata),
      ObjectParts: () => (layout === null ? undefined : objectPartsContent(layout, maxParts, marker)),
      StorageClass: () => String(metadata['x-amz-storage-class'] ?? 'STANDARD'),
      ObjectSize: () => Number(metadata['content-length']),
    };
    res.setHeader('Last-Modified', String(metadata['last-modified']));
    sendXmlResult(
      res,
      'GetObjectAttributesResponse',
      Object.fromEntries(ATTRIBUTES.filter((name) => attributes.has(name)).map((name) => [name, content[name]()])),
    );
  };
};
