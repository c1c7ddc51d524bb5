/**
 * The additional checksums of multipart uploads, as S3 applies them: the algorithm (and
 * checksum type) named at CreateMultipartUpload, the checksum every part of such an upload
 * must carry, and the checksum of the completed object: COMPOSITE (the checksum of the parts'
 * binary checksums, then `-<part count>`) or FULL_OBJECT (the checksum of the whole content).
 *
 * An upload's algorithm and type are read from its CreateMultipartUpload headers, which the
 * storage keeps with the upload (as it keeps each part's checksum).
 */
import type { IncomingHttpHeaders } from 'node:http';

import type { PartChecksum } from '../../storage/storage.ts';
import {
  CHECKSUM_ALGORITHMS,
  checksumHeaderName,
  DEFAULT_CHECKSUM_ALGORITHM,
  type ChecksumAlgorithm,
} from '../../checksum-algorithms.ts';
import { readChecksumRequest, startChecksum, type ChecksumRequest } from '../bodies/checksums.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import type { OperationContext } from './context.ts';

export const CHECKSUM_TYPES = ['COMPOSITE', 'FULL_OBJECT'] as const;
export type ChecksumType = (typeof CHECKSUM_TYPES)[number];

/** How an upload (and the object it completes into) is checksummed. */
export interface UploadChecksum {
  algorithm: ChecksumAlgorithm;
  type: ChecksumType;
}

/** `ChecksumCRC32` for CRC32, and so on: the element name in S3's XML documents. */
export function checksumElementName(algorithm: ChecksumAlgorithm): string {
  return `Checksum${algorithm}`;
}

function header(headers: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(',') : undefined;
}

/** Full-object checksums need a checksum that can be combined over parts: the CRCs. */
const FULL_OBJECT_ALGORITHMS: ReadonlySet<ChecksumAlgorithm> = new Set(['CRC32', 'CRC32C', 'CRC64NVME']);

/**
 * The checksum a CreateMultipartUpload asks for (`x-amz-checksum-algorithm`, `x-amz-checksum-type`);
 * null when none. CRC64NVME is full-object only; the other algorithms default to COMPOSITE.
 */
export function readUploadChecksum(headers: Readonly<Record<string, unknown>>): UploadChecksum | null {
  const named = header(headers, 'x-amz-checksum-algorithm');
  const namedType = header(headers, 'x-amz-checksum-type');
  if (named === undefined) {
    if (namedType !== undefined) throw new GatewayError(errors.checksumTypeWithoutAlgorithm());
    return null;
  }
  const algorithm = CHECKSUM_ALGORITHMS.find((candidate) => candidate === named.toUpperCase());
  if (algorithm === undefined) throw new GatewayError(errors.unsupportedChecksumAlgorithm());
  const type =
    namedType === undefined ? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE') : namedType.toUpperCase();
  if (type !== 'COMPOSITE' && type !== 'FULL_OBJECT') {
    throw new GatewayError(errors.invalidChecksumType());
  }
  const allowed = type === 'FULL_OBJECT' ? FULL_OBJECT_ALGORITHMS.has(algorithm) : algorithm !== 'CRC64NVME';
  if (!allowed) {
    throw new GatewayError(errors.checksumTypeNotForAlgorithm(type, algorithm));
  }
  return { algorithm, type };
}

/** The checksum of an upload in progress (none when there is no such upload). */
export async function uploadChecksumOf(ctx: OperationContext, uploadId: string): Promise<UploadChecksum | null> {
  const upload = await ctx.storage.uploadInProgress(ctx.target.bucket!, uploadId);
  return readUploadChecksum(upload?.createHeaders ?? {});
}

/** A CompleteMultipartUpload's `x-amz-checksum-type`, when it sends one, must be the upload's. */
export function requireCompletionChecksumType(upload: UploadChecksum | null, headers: IncomingHttpHeaders): void {
  const named = header(headers, 'x-amz-checksum-type');
  if (named === undefined || upload === null) return;
  if (named.toUpperCase() !== upload.type) throw new GatewayError(errors.completionChecksumTypeMismatch(upload.type));
}

/** The headers CreateMultipartUpload answers for an upload with a checksum. */
export function uploadChecksumHeaders(checksum: UploadChecksum | null): Record<string, string> {
  return checksum === null
    ? {}
    : { 'x-amz-checksum-algorithm': checksum.algorithm, 'x-amz-checksum-type': checksum.type };
}

/** An UploadPart into an upload with a checksum must carry that algorithm's checksum. */
export function requirePartChecksum(upload: UploadChecksum | null, requested: ChecksumRequest): void {
  if (upload === null) return;
  const actual = requested.source === 'none' ? null : requested.algorithm;
  if (actual !== upload.algorithm) throw new GatewayError(errors.partChecksumTypeMismatch(upload.algorithm, actual));
}

/** The part checksums a CompleteMultipartUpload lists, by `ChecksumCRC32` and so on. */
export type ListedPartChecksums = Partial<Record<ChecksumAlgorithm, string>>;

/**
 * Checks the checksum a CompleteMultipartUpload lists for a part against the upload's algorithm
 * and the part's stored checksum (InvalidPart when they differ, as S3 answers).
 */
export function requireListedPartChecksum(
  upload: UploadChecksum | null,
  partNumber: number,
  listed: ListedPartChecksums,
  stored: PartChecksum | null,
): void {
  const entries = Object.entries(listed) as [ChecksumAlgorithm, string][];
  if (entries.length > 1) throw new GatewayError(errors.multiplePartChecksums());
  if (upload === null) {
    if (entries.length > 0) throw new GatewayError(errors.invalidPart());
    return;
  }
  const [entry] = entries;
  if (entry === undefined) throw new GatewayError(errors.missingPartChecksum(upload.algorithm, partNumber));
  const [algorithm, value] = entry;
  if (
    algorithm !== upload.algorithm ||
    stored === null ||
    stored.algorithm !== algorithm ||
    stored.value !== value.trim()
  ) {
    throw new GatewayError(errors.invalidPart());
  }
}

/** S3's COMPOSITE checksum: the algorithm over the parts' binary checksums, then `-<part count>`. */
async function compositeChecksum(algorithm: ChecksumAlgorithm, partChecksums: readonly string[]): Promise<string> {
  const running = startChecksum(algorithm);
  for (const value of partChecksums) running.update(Buffer.from(value, 'base64'));
  return `${await running.digest()}-${partChecksums.length}`;
}

/** A completed object's checksum, as kept and answered. */
export interface ObjectChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64; `-<part count>` after it for a COMPOSITE one. */
  value: string;
  type: ChecksumType;
}

/**
 * The checksum a completed upload's object gets: COMPOSITE from its parts' checksums, else
 * FULL_OBJECT over its content as it is joined (`update`): the upload's full-object algorithm,
 * or S3's default one when the upload named none. `digest` is answered once the content is whole.
 */
export function completedObjectChecksum(
  upload: UploadChecksum | null,
  partChecksums: readonly (string | null)[],
): { update(data: Buffer): void; digest(): Promise<ObjectChecksum> } {
  if (upload?.type === 'COMPOSITE') {
    const algorithm = upload.algorithm;
    const composite = compositeChecksum(algorithm, partChecksums as string[]).then((value) => ({
      algorithm,
      value,
      type: upload.type,
    }));
    return { update: () => {}, digest: () => composite };
  }
  const algorithm = upload?.algorithm ?? DEFAULT_CHECKSUM_ALGORITHM;
  const running = startChecksum(algorithm);
  let whole: Promise<ObjectChecksum> | null = null;
  return {
    update: (data) => running.update(data),
    digest: () => (whole ??= running.digest().then((value) => ({ algorithm, value, type: 'FULL_OBJECT' }))),
  };
}

/** A checksum a request sends in `x-amz-checksum-<algorithm>`. */
export interface SentChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64. */
  value: string;
}

/** A COMPOSITE checksum's `-<part count>`. */
const PART_COUNT_SUFFIX = /-\d{1,5}$/;

/**
 * The checksum of the whole object a CompleteMultipartUpload may send in `x-amz-checksum-<algorithm>`,
 * read as a PutObject's is (one at most, a well-formed value, here with or without a COMPOSITE
 * checksum's `-<part count>`); null when it sends none.
 */
export function readCompletionChecksum(headers: IncomingHttpHeaders): SentChecksum | null {
  const withoutPartCounts = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      name.startsWith('x-amz-checksum-') && typeof value === 'string' ? value.replace(PART_COUNT_SUFFIX, '') : value,
    ]),
  );
  const requested = readChecksumRequest(withoutPartCounts);
  if (requested.source !== 'header') return null;
  const sent = headers[checksumHeaderName(requested.algorithm)];
  return { algorithm: requested.algorithm, value: typeof sent === 'string' ? sent.trim() : requested.value };
}

/**
 * The completed object's checksum must be the one the request sent, if it sent one: of the same
 * algorithm (else InvalidRequest, as for a part) and value (else BadDigest, and nothing is placed).
 * A COMPOSITE checksum may be sent with its `-<part count>` or without it.
 */
export function requireCompletionChecksum(sent: SentChecksum | null, object: ObjectChecksum): void {
  if (sent === null) return;
  if (sent.algorithm !== object.algorithm)
    throw new GatewayError(errors.partChecksumTypeMismatch(object.algorithm, sent.algorithm));
  const expected = PART_COUNT_SUFFIX.test(sent.value) ? object.value : object.value.replace(PART_COUNT_SUFFIX, '');
  if (sent.value !== expected) throw new GatewayError(errors.badChecksum(sent.algorithm));
}

/** The checksum headers kept in a completed object's metadata (and answered with checksum mode). */
export function storedObjectChecksum({ algorithm, value, type }: ObjectChecksum): Record<string, string> {
  return { [checksumHeaderName(algorithm)]: value, 'x-amz-checksum-type': type };
}
