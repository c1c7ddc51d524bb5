/**
 * The flexible checksums of S3 uploads (`x-amz-checksum-*` headers and trailers), as S3 reads
 * and checks them: which one a request asks for, whether its value is well-formed, and computing
 * it over the body.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

import { Crc32, Crc32c } from '@aws-sdk/checksums/crc';

import { Crc64Nvme } from './crc64-nvme.ts';
import { CHECKSUM_ALGORITHMS, checksumHeaderName, type ChecksumAlgorithm } from '../../checksum-algorithms.ts';
import { errors, GatewayError } from '../../s3-errors.ts';

/** A checksum being computed over a body that arrives in pieces. */
export interface RunningChecksum {
  update(data: Uint8Array): void;
  /** The base64 value, as it appears in `x-amz-checksum-*`. */
  digest(): Promise<string>;
}

function fromSmithy(checksum: { update(data: Uint8Array): void; digest(): Promise<Uint8Array> }): RunningChecksum {
  return {
    update: (data) => checksum.update(data),
    digest: async () => Buffer.from(await checksum.digest()).toString('base64'),
  };
}

function fromNodeHash(name: 'sha1' | 'sha256'): RunningChecksum {
  const hash = createHash(name);
  return {
    update: (data) => hash.update(data),
    digest: async () => hash.digest('base64'),
  };
}

const ALGORITHMS: Readonly<Record<ChecksumAlgorithm, { digestBytes: number; start(): RunningChecksum }>> = {
  CRC32: { digestBytes: 4, start: () => fromSmithy(new Crc32()) },
  CRC32C: { digestBytes: 4, start: () => fromSmithy(new Crc32c()) },
  CRC64NVME: { digestBytes: 8, start: () => fromSmithy(new Crc64Nvme()) },
  SHA1: { digestBytes: 20, start: () => fromNodeHash('sha1') },
  SHA256: { digestBytes: 32, start: () => fromNodeHash('sha256') },
};

export function startChecksum(algorithm: ChecksumAlgorithm): RunningChecksum {
  return ALGORITHMS[algorithm].start();
}

function algorithmOfHeader(name: string): ChecksumAlgorithm | undefined {
  return CHECKSUM_ALGORITHMS.find((algorithm) => checksumHeaderName(algorithm) === name.toLowerCase());
}

/** Canonical base64 (with padding) of exactly as many bytes as the algorithm's digest. */
export function isValidChecksumValue(algorithm: ChecksumAlgorithm, value: string): boolean {
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === ALGORITHMS[algorithm].digestBytes && bytes.toString('base64') === value;
}

/** What a request says about its checksum, before its body is read. */
export type ChecksumRequest =
  | { source: 'none' }
  | { source: 'header'; algorithm: ChecksumAlgorithm; value: string }
  /** Announced in `x-amz-trailer`; the value follows the body. */
  | { source: 'trailer'; algorithm: ChecksumAlgorithm; header: string };

function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function checksumHeaders(headers: IncomingHttpHeaders): { algorithm: ChecksumAlgorithm; value: string }[] {
  return Object.keys(headers).flatMap((name) => {
    const algorithm = algorithmOfHeader(name);
    return algorithm === undefined ? [] : [{ algorithm, value: singleHeader(headers, name)! }];
  });
}

function announcedTrailer(headers: IncomingHttpHeaders): Extract<ChecksumRequest, { source: 'trailer' }> | null {
  const announced = singleHeader(headers, 'x-amz-trailer')?.trim();
  if (announced === undefined || announced === '') return null;
  const algorithm = algorithmOfHeader(announced);
  if (algorithm === undefined) throw new GatewayError(errors.unsupportedTrailer());
  return { source: 'trailer', algorithm, header: checksumHeaderName(algorithm) };
}

function sdkAlgorithm(headers: IncomingHttpHeaders): ChecksumAlgorithm | null {
  const named = singleHeader(headers, 'x-amz-sdk-checksum-algorithm');
  if (named === undefined) return null;
  const algorithm = CHECKSUM_ALGORITHMS.find((candidate) => candidate === named.toUpperCase());
  if (algorithm === undefined) throw new GatewayError(errors.unsupportedChecksumAlgorithm());
  return algorithm;
}

/**
 * Reads the checksum a request asks S3 to check: one `x-amz-checksum-*` header, or one announced
 * in `x-amz-trailer`, agreeing with `x-amz-sdk-checksum-algorithm` when that is present.
 */
export function readChecksumRequest(headers: IncomingHttpHeaders): ChecksumRequest {
  const inHeaders = checksumHeaders(headers);
  const trailer = announcedTrailer(headers);
  if (inHeaders.length + (trailer ? 1 : 0) > 1) throw new GatewayError(errors.multipleChecksums());
  const requested: ChecksumRequest =
    trailer ?? (inHeaders[0] ? { source: 'header', ...inHeaders[0] } : { source: 'none' });
  if (requested.source === 'header' && !isValidChecksumValue(requested.algorithm, requested.value)) {
    throw new GatewayError(errors.invalidChecksumValue(checksumHeaderName(requested.algorithm), 'header'));
  }

  const named = sdkAlgorithm(headers);
  if (named !== null) {
    if (requested.source === 'none') throw new GatewayError(errors.sdkAlgorithmWithoutChecksum());
    // S3 computes the algorithm the SDK named, which the checksum sent for another one cannot match.
    if (requested.algorithm !== named) throw new GatewayError(errors.badChecksum(named));
  }
  return requested;
}

/** The checksum of an object put in one piece, as kept in its metadata and answered in headers. */
export function objectChecksumHeaders(algorithm: ChecksumAlgorithm, value: string): Record<string, string> {
  return { [checksumHeaderName(algorithm)]: value, 'x-amz-checksum-type': 'FULL_OBJECT' };
}

/** The checksum headers among an object's stored metadata. */
export function pickChecksumHeaders(metadata: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).filter(
      (entry): entry is [string, string] => entry[0].startsWith('x-amz-checksum-') && typeof entry[1] === 'string',
    ),
  );
}

/** GetObject / HeadObject answer the stored checksum only when asked to, and never for a range. */
export function answersStoredChecksum(headers: IncomingHttpHeaders): boolean {
  return singleHeader(headers, 'x-amz-checksum-mode')?.toUpperCase() === 'ENABLED' && headers.range === undefined;
}
