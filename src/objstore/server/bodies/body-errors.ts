/**
 * The S3 errors about request bodies: framing (aws-chunked, multipart/form-data), lengths and
 * integrity checks. Codes, statuses and messages are S3's own.
 */
import { s3Error, type S3ErrorSpec } from '../../s3-errors.ts';
import type { ChecksumAlgorithm } from '../../checksum-algorithms.ts';

const MALFORMED_TRAILER_MESSAGE =
  'The request contained trailing data that was not well-formed or did not conform to our published schema.';

export const bodyErrors = {
  /** Chunk framing that cannot be parsed, or a body that ends before its final chunk. */
  incompleteBody: (): S3ErrorSpec => ({
    status: 400,
    code: 'IncompleteBody',
    message: 'The request body terminated unexpectedly',
  }),
  /** The decoded body is shorter or longer than `x-amz-decoded-content-length`. */
  decodedLengthMismatch: (): S3ErrorSpec => ({
    status: 400,
    code: 'IncompleteBody',
    message: 'You did not provide the number of bytes specified by the Content-Length HTTP header',
  }),
  missingContentLength: (): S3ErrorSpec => ({
    status: 411,
    code: 'MissingContentLength',
    message: 'You must provide the Content-Length HTTP header.',
  }),
  /** `Transfer-Encoding: chunked` around a body that is not aws-chunked. */
  transferEncodingNotImplemented: (): S3ErrorSpec => ({
    status: 501,
    code: 'NotImplemented',
    message: 'A header you provided implies functionality that is not implemented',
  }),
  /** A STREAMING-* payload hash on an operation whose body is not an upload. */
  streamingPayloadNotImplemented: (): S3ErrorSpec => ({
    status: 501,
    code: 'NotImplemented',
    message: 'A header you provided implies functionality that is not implemented',
    details: [['Header', 'x-amz-content-sha256']],
  }),
  entityTooLarge: (): S3ErrorSpec => ({
    status: 400,
    code: 'EntityTooLarge',
    message: 'Your proposed upload exceeds the maximum allowed size',
  }),
  invalidChunkSize: (): S3ErrorSpec => ({
    status: 403,
    code: 'InvalidChunkSizeError',
    message: 'Only the last chunk is allowed to have a size less than 8192 bytes',
  }),
  malformedTrailer: (): S3ErrorSpec => ({ status: 400, code: 'MalformedTrailerError', message: MALFORMED_TRAILER_MESSAGE }),
  malformedForm: () =>
    s3Error(400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.'),
  /** A form without a file part (or whose `file` field is not a file). */
  noFormFile: () =>
    s3Error(400, 'InvalidArgument', 'POST requires exactly one file upload per request.', [
      ['ArgumentName', 'file'],
      ['ArgumentValue', '0'],
    ]),
  /** More than `limit` bytes of a form before its file's content (S3's words, spelling included). */
  formFieldsTooLarge: (limit: number) =>
    s3Error(400, 'MaxPostPreDataLengthExceeded', 'Your POST request fields preceeding the upload file was too large.', [
      ['MaxPostPreDataLengthBytes', String(limit)],
    ]),
  invalidContentSha256: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidArgument',
    message:
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
      'STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, ' +
      'or a valid sha256 value.',
  }),
  contentSha256Mismatch: (): S3ErrorSpec => ({
    status: 400,
    code: 'XAmzContentSHA256Mismatch',
    message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
  }),
  invalidContentMd5: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidDigest',
    message: 'The Content-MD5 you specified was invalid.',
  }),
  badContentMd5: (): S3ErrorSpec => ({
    status: 400,
    code: 'BadDigest',
    message: 'The Content-MD5 you specified did not match what we received.',
  }),
  badChecksum: (algorithm: ChecksumAlgorithm): S3ErrorSpec => ({
    status: 400,
    code: 'BadDigest',
    message: `The ${algorithm} you specified did not match the calculated checksum.`,
  }),
  invalidChecksumValue: (headerName: string, where: 'header' | 'trailing header'): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidRequest',
    message: `Value for ${headerName} ${where} is invalid.`,
  }),
  multipleChecksums: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidRequest',
    message: 'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
  }),
  unsupportedTrailer: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidRequest',
    message: 'The value specified in the x-amz-trailer header is not supported',
  }),
  unsupportedChecksumAlgorithm: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidRequest',
    message:
      'Checksum algorithm provided is unsupported. Please try again with any of the valid types: ' +
      '[CRC32, CRC32C, CRC64NVME, SHA1, SHA256]',
  }),
  sdkAlgorithmWithoutChecksum: (): S3ErrorSpec => ({
    status: 400,
    code: 'InvalidRequest',
    message:
      'x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.',
  }),
} as const;
