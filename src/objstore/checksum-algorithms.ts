/** The checksum algorithms S3 accepts on uploads (the names of its `x-amz-checksum-*` headers, upper-cased). */
export const CHECKSUM_ALGORITHMS = ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/** `x-amz-checksum-crc32` for CRC32, and so on. */
export function checksumHeaderName(algorithm: ChecksumAlgorithm): string {
  return `x-amz-checksum-${algorithm.toLowerCase()}`;
}

/** S3 gives every new object a CRC64NVME checksum when the upload brought none. */
export const DEFAULT_CHECKSUM_ALGORITHM: ChecksumAlgorithm = 'CRC64NVME';
