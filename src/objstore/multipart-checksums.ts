/**
 * The additional checksums of multipart uploads, as S3 applies them: the algorithm (and
 * checksum type) named at CreateMultipartUpload, the checksum every part of such an upload
 * must carry, and the checksum of the completed object: COMPOSITE (the checksum of the parts'
 * binary checksums, then `-<part count>`) or FULL_OBJECT (the checksum of the whole content).
 *
 * An upload's algorithm and type are its CreateMultipartUpload headers, which s3rver keeps in the
 * upload's `metadata` file; a part's checksum is kept beside it in `<partNumber>.checksum`.
 */
import path from 'node:path';

import {
  CHECKSUM_ALGORITHMS,
  DEFAULT_CHECKSUM_ALGORITHM,
  checksumHeaderName,
  startChecksum,
  type ChecksumAlgorithm,
  type ChecksumRequest,
} from './checksums.ts';
import { readOptional, type OperationOverride } from './compat.ts';
import { errors, GatewayError } from './errors.ts';

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

const lower = (algorithm: ChecksumAlgorithm) => algorithm.toLowerCase();

export const multipartChecksumErrors = {
  unsupportedAlgorithm: () =>
    errors.invalidRequest(
      `Checksum algorithm provided is unsupported. Please try again with any of the valid types: [${CHECKSUM_ALGORITHMS.join(', ')}]`,
    ),
  typeWithoutAlgorithm: () =>
    errors.invalidRequest('The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.'),
  unsupportedType: (type: string, algorithm: ChecksumAlgorithm) =>
    errors.invalidRequest(`The ${type} checksum type cannot be used with the ${lower(algorithm)} checksum algorithm.`),
  partTypeMismatch: (expected: ChecksumAlgorithm, actual: ChecksumAlgorithm | null) =>
    errors.invalidRequest(
      `Checksum Type mismatch occurred, expected checksum Type: ${lower(expected)}, actual checksum Type: ${actual === null ? 'null' : lower(actual)}`,
    ),
  missingPartChecksum: (algorithm: ChecksumAlgorithm, partNumber: number) =>
    errors.invalidRequest(
      `The upload was created using a ${lower(algorithm)} checksum. The complete request must include the checksum ` +
        `for each part. It was missing for part ${partNumber} in the request.`,
    ),
  multiplePartChecksums: () => errors.invalidArgument('Multiple checksum types are not allowed for a single part.'),
} as const;

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
    if (namedType !== undefined) throw new GatewayError(multipartChecksumErrors.typeWithoutAlgorithm());
    return null;
  }
  const algorithm = CHECKSUM_ALGORITHMS.find((candidate) => candidate === named.toUpperCase());
  if (algorithm === undefined) throw new GatewayError(multipartChecksumErrors.unsupportedAlgorithm());
  const type = namedType === undefined ? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE') : namedType.toUpperCase();
  if (type !== 'COMPOSITE' && type !== 'FULL_OBJECT') {
    throw new GatewayError(errors.invalidRequest('Value for x-amz-checksum-type header is invalid.'));
  }
  const allowed = type === 'FULL_OBJECT' ? FULL_OBJECT_ALGORITHMS.has(algorithm) : algorithm !== 'CRC64NVME';
  if (!allowed) {
    throw new GatewayError(multipartChecksumErrors.unsupportedType(type, algorithm));
  }
  return { algorithm, type };
}

/** The checksum of the upload in progress in `uploadDirectory`, from its CreateMultipartUpload headers. */
export async function uploadChecksumOf(uploadDirectory: string): Promise<UploadChecksum | null> {
  const metadata = await readOptional(path.join(uploadDirectory, 'metadata'));
  return metadata === null ? null : readUploadChecksum(JSON.parse(metadata) as Record<string, unknown>);
}

/** The headers CreateMultipartUpload answers for an upload with a checksum. */
export function uploadChecksumHeaders(checksum: UploadChecksum | null): Record<string, string> {
  return checksum === null ? {} : { 'x-amz-checksum-algorithm': checksum.algorithm, 'x-amz-checksum-type': checksum.type };
}

/** An UploadPart into an upload with a checksum must carry that algorithm's checksum. */
export function requirePartChecksum(upload: UploadChecksum | null, requested: ChecksumRequest): void {
  if (upload === null) return;
  const actual = requested.source === 'none' ? null : requested.algorithm;
  if (actual !== upload.algorithm) throw new GatewayError(multipartChecksumErrors.partTypeMismatch(upload.algorithm, actual));
}

/** Where a part's checksum is kept: `{"algorithm":..., "value":...}`. */
export function partChecksumFile(partFile: string): string {
  return `${partFile}.checksum`;
}

export interface PartChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64. */
  value: string;
}

export async function readPartChecksum(partFile: string): Promise<PartChecksum | null> {
  const stored = await readOptional(partChecksumFile(partFile));
  return stored === null ? null : (JSON.parse(stored) as PartChecksum);
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
  if (entries.length > 1) throw new GatewayError(multipartChecksumErrors.multiplePartChecksums());
  if (upload === null) {
    if (entries.length > 0) throw new GatewayError(errors.invalidPart());
    return;
  }
  const [entry] = entries;
  if (entry === undefined) throw new GatewayError(multipartChecksumErrors.missingPartChecksum(upload.algorithm, partNumber));
  const [algorithm, value] = entry;
  if (algorithm !== upload.algorithm || stored === null || stored.algorithm !== algorithm || stored.value !== value.trim()) {
    throw new GatewayError(errors.invalidPart());
  }
}

/** S3's COMPOSITE checksum: the algorithm over the parts' binary checksums, then `-<part count>`. */
export async function compositeChecksum(algorithm: ChecksumAlgorithm, partChecksums: readonly string[]): Promise<string> {
  const running = startChecksum(algorithm);
  for (const value of partChecksums) running.update(Buffer.from(value, 'base64'));
  return `${await running.digest()}-${partChecksums.length}`;
}

/**
 * What the completed object's checksum is computed as: the upload's full-object algorithm over
 * the assembled content, S3's default one when the upload named none, or null for a composite
 * checksum (computed from the parts instead).
 */
export function fullObjectAlgorithm(upload: UploadChecksum | null): ChecksumAlgorithm | null {
  if (upload === null) return DEFAULT_CHECKSUM_ALGORITHM;
  return upload.type === 'FULL_OBJECT' ? upload.algorithm : null;
}

/** The checksum headers kept in a completed object's metadata (and answered with checksum mode). */
export function storedObjectChecksum(algorithm: ChecksumAlgorithm, value: string, type: ChecksumType): Record<string, string> {
  return { [checksumHeaderName(algorithm)]: value, 'x-amz-checksum-type': type };
}

/** CreateMultipartUpload: s3rver keeps its headers (the checksum among them), which are checked and echoed first. */
export const createMultipartUpload: OperationOverride = async (ctx) => {
  const checksum = readUploadChecksum(ctx.exchange.req.headers);
  for (const [name, value] of Object.entries(uploadChecksumHeaders(checksum))) ctx.exchange.res.setHeader(name, value);
  ctx.delegate();
};
