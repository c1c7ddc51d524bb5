/**
 * CreateMultipartUpload, AbortMultipartUpload, ListParts and ListMultipartUploads. Parts arrive by
 * UploadPart (uploads.ts) and UploadPartCopy (upload-part-copy.ts); CompleteMultipartUpload is in
 * complete-multipart.ts, upload checksums in multipart-checksums.ts.
 */
import type { UploadedPart, UploadInProgress, UploadSummary } from '../../storage/storage.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import {
  commonPrefixesOf,
  compareKeys,
  itemsOf,
  pageOf,
  parseEncodingType,
  parseIntegerParam,
  parsePrefixAndDelimiter,
  requireNonNegative,
  type NameEncoder,
} from './paging.ts';
import { bucketOwnerContent, commonPrefixes, s3Timestamp } from './result-xml.ts';
import { singleParam } from '../target.ts';
import { reachOf, requireUpload, type BucketHandler, type OperationContext } from './context.ts';
import { sendXmlResult, type XmlContent } from '../xml.ts';
import {
  checksumElementName,
  readUploadChecksum,
  uploadChecksumHeaders,
  type UploadChecksum,
} from './multipart-checksums.ts';
import { storedHeaders } from './stored-headers.ts';

/** The most parts (ListParts) or uploads (ListMultipartUploads) one page holds, and the default. */
const MAX_PER_PAGE = 1000;

/** The storage class named at CreateMultipartUpload; STANDARD when none was. */
function storageClassOf(upload: UploadInProgress): string {
  const storageClass = upload.createHeaders?.['x-amz-storage-class'];
  return typeof storageClass === 'string' ? storageClass : 'STANDARD';
}

/** The bucket's uploads in progress that the request's key reaches: by key, then by initiation (as S3 lists them). */
async function uploadsInProgress(ctx: OperationContext, bucket: string): Promise<UploadSummary[]> {
  const reach = reachOf(ctx);
  const reachable = (await ctx.storage.uploadsInProgress(bucket)).filter(
    (upload) => reach !== null && upload.key.startsWith(reach),
  );
  return reachable.sort(
    (a, b) =>
      compareKeys(a.key, b.key) || a.initiated.getTime() - b.initiated.getTime() || compareKeys(a.uploadId, b.uploadId),
  );
}

/**
 * CreateMultipartUpload: its checksum (answered back) and the headers the object will be stored
 * with are checked before the bucket is looked up. The upload keeps the request's headers, which
 * the object takes its own from when it is completed.
 */
export const createMultipartUpload: BucketHandler = (ctx) => {
  const { req, res } = ctx.exchange;
  const checksum = readUploadChecksum(req.headers);
  storedHeaders(ctx, req.headers);
  return async () => {
    const { bucket, key } = ctx.target;
    // Without the request's signature, which is no header of the object's.
    const { authorization: _, ...headers } = req.headers;
    const uploadId = await ctx.storage.startUpload(bucket!, key!, headers);
    for (const [name, value] of Object.entries(uploadChecksumHeaders(checksum))) res.setHeader(name, value);
    sendXmlResult(res, 'InitiateMultipartUploadResult', { Bucket: bucket!, Key: key!, UploadId: uploadId });
  };
};

/** AbortMultipartUpload: 204, and the upload and its parts are gone. */
export async function abortMultipartUpload(ctx: OperationContext): Promise<void> {
  await ctx.storage.removeUpload(ctx.target.bucket!, await requireUpload(ctx));
  const { res } = ctx.exchange;
  res.statusCode = 204;
  res.end();
}

/** The checksum named at CreateMultipartUpload; none when none was. */
function checksumOf(upload: UploadInProgress): UploadChecksum | null {
  return readUploadChecksum(upload.createHeaders ?? {});
}

function partContent(part: UploadedPart): XmlContent {
  return {
    PartNumber: part.number,
    LastModified: s3Timestamp(part.lastModified),
    ETag: JSON.stringify(part.md5),
    Size: part.size,
    ...(part.checksum === null ? {} : { [checksumElementName(part.checksum.algorithm)]: part.checksum.value }),
  };
}

/** ListParts, paged by `part-number-marker`. */
export const listParts: BucketHandler = (ctx) => {
  const { query } = ctx.target;
  const maxParts = parseIntegerParam(query, 'max-parts', MAX_PER_PAGE);
  const marker = parseIntegerParam(query, 'part-number-marker', 0);
  return async () => {
    const uploadId = await requireUpload(ctx);
    requireNonNegative(maxParts, 'max-parts');
    requireNonNegative(marker, 'part-number-marker');
    const limit = Math.min(maxParts, MAX_PER_PAGE);
    const bucket = ctx.target.bucket!;
    const upload = await ctx.storage.uploadInProgress(bucket, uploadId);
    if (upload === null) throw new GatewayError(errors.noSuchUpload());
    // One part past the page tells whether there are more.
    const parts = await ctx.storage.uploadedParts(bucket, uploadId, { after: marker, limit: limit + 1 });
    const page = parts.slice(0, limit);
    sendXmlResult(ctx.exchange.res, 'ListPartsResult', {
      Bucket: bucket,
      Key: upload.key,
      UploadId: uploadId,
      Initiator: bucketOwnerContent(ctx.buckets, bucket),
      Owner: bucketOwnerContent(ctx.buckets, bucket),
      StorageClass: storageClassOf(upload),
      ChecksumAlgorithm: checksumOf(upload)?.algorithm,
      ChecksumType: checksumOf(upload)?.type,
      PartNumberMarker: marker,
      // As S3: the last part listed, 0 on an empty page, and there also when the list is complete
      // (so clients must stop on IsTruncated, not on a missing marker).
      NextPartNumberMarker: page.at(-1)?.number ?? 0,
      MaxParts: limit,
      IsTruncated: parts.length > page.length && limit > 0,
      Part: page.map(partContent),
    });
  };
};

function uploadContent(upload: UploadInProgress, encode: NameEncoder, owner: XmlContent): XmlContent {
  return {
    Key: encode(upload.key),
    UploadId: upload.uploadId,
    Initiator: owner,
    Owner: owner,
    StorageClass: storageClassOf(upload),
    Initiated: s3Timestamp(upload.initiated),
    ChecksumAlgorithm: checksumOf(upload)?.algorithm,
    ChecksumType: checksumOf(upload)?.type,
  };
}

/**
 * ListMultipartUploads, paged by `key-marker` and `upload-id-marker` (which S3 ignores without a
 * key marker, and refuses when it names no upload of that key).
 */
export const listMultipartUploads: BucketHandler = (ctx) => {
  const { query } = ctx.target;
  const maxUploads = parseIntegerParam(query, 'max-uploads', MAX_PER_PAGE);
  return async () => {
    const bucket = ctx.target.bucket!;
    const { encodingType, encode } = parseEncodingType(query);
    requireNonNegative(maxUploads, 'max-uploads');
    const { prefix, delimiter } = parsePrefixAndDelimiter(query);
    const keyMarker = singleParam(query, 'key-marker') ?? '';
    const uploadIdMarker = keyMarker === '' ? '' : (singleParam(query, 'upload-id-marker') ?? '');

    let uploads = await uploadsInProgress(ctx, bucket);
    if (uploadIdMarker !== '') {
      const at = uploads.findIndex((upload) => upload.key === keyMarker && upload.uploadId === uploadIdMarker);
      if (at === -1) throw new GatewayError(errors.invalidUploadIdMarker());
      uploads = uploads.slice(at + 1);
    }
    const limit = Math.min(maxUploads, MAX_PER_PAGE);
    const page = pageOf(uploads, (upload) => upload.key, {
      prefix,
      delimiter,
      marker: keyMarker,
      includeMarkerKey: uploadIdMarker !== '',
      limit,
    });

    const last = page.entries.at(-1);
    const owner = bucketOwnerContent(ctx.buckets, bucket);
    // Only the uploads on the page are read whole; one completed or aborted meanwhile drops out.
    const listed = await Promise.all(
      itemsOf(page).map((upload) => ctx.storage.uploadInProgress(bucket, upload.uploadId)),
    );
    sendXmlResult(ctx.exchange.res, 'ListMultipartUploadsResult', {
      Bucket: bucket,
      KeyMarker: encode(keyMarker),
      UploadIdMarker: uploadIdMarker,
      NextKeyMarker: last ? encode(last.name) : '',
      NextUploadIdMarker: last?.kind === 'item' ? last.item.uploadId : '',
      Delimiter: delimiter === '' ? undefined : encode(delimiter),
      Prefix: prefix === '' ? undefined : encode(prefix),
      MaxUploads: limit,
      EncodingType: encodingType,
      IsTruncated: page.isTruncated,
      Upload: listed.filter((upload) => upload !== null).map((upload) => uploadContent(upload, encode, owner)),
      CommonPrefixes: commonPrefixes(commonPrefixesOf(page), encode),
    });
  };
};
