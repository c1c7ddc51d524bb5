/** S3's answers to requests whose SigV4 authentication it refuses, with the elements S3 adds. */
import { errors } from '../errors.ts';
import { s3Error } from '../../s3-errors.ts';

/** ISO 8601 to the second, as S3 writes ServerTime and Expires. */
const isoSeconds = (time: number) => new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');

const PAYLOAD_HASH_VALUES =
  'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, ' +
  'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER ' +
  'or a valid sha256 value.';

const expiresRefused = (message: string) => s3Error(403, 'AuthorizationQueryParametersError', message);

export const authErrors = {
  /** SigV2, as a region that only takes SigV4 refuses it. */
  signatureVersionNotSupported: () =>
    errors.invalidRequest('The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.'),
  missingContentSha256: () => errors.invalidRequest('Missing required header for this request: x-amz-content-sha256'),
  invalidContentSha256: (value: string) =>
    s3Error(400, 'InvalidArgument', PAYLOAD_HASH_VALUES, [
      ['ArgumentName', 'x-amz-content-sha256'],
      ['ArgumentValue', value],
    ]),
  missingRequestDate: () => errors.accessDenied('AWS authentication requires a valid Date or x-amz-date header'),
  invalidPresignedDate: () =>
    errors.authorizationQueryParametersError(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`),
  // An X-Amz-Expires out of range is 403, as the S3 conformance suite (ceph s3-tests,
  // test_object_raw_get_x_amz_expires_out_*) expects of S3; other malformed query parameters are 400.
  expiresNotANumber: () => expiresRefused('X-Amz-Expires should be a number'),
  expiresNegative: () => expiresRefused('X-Amz-Expires must be non-negative'),
  expiresTooLong: (maxSeconds: number) =>
    expiresRefused(`X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than ${maxSeconds} seconds`),
  /** A credential scope S3 does not take: `detail` says which part is wrong. */
  badScope: (presigned: boolean, detail: string) =>
    presigned
      ? errors.authorizationQueryParametersError(`Error parsing the X-Amz-Credential parameter; ${detail}`)
      : errors.authorizationHeaderMalformed(detail),
  scopeDateMismatch: (presigned: boolean, scopeDate: string, requestDate: string) => {
    const detail = `Invalid credential date "${scopeDate}". This date is not the same as X-Amz-Date: "${requestDate}".`;
    return presigned ? errors.authorizationQueryParametersError(detail) : errors.authorizationHeaderMalformed(detail);
  },
  headersNotSigned: (names: readonly string[]) =>
    s3Error(403, 'AccessDenied', 'There were headers present in the request which were not signed', [
      ['HeadersNotSigned', names.join(', ')],
    ]),
  requestTimeTooSkewed: (requestTime: string, serverTime: number, maxSkewMs: number) =>
    s3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', [
      ['RequestTime', requestTime],
      ['ServerTime', isoSeconds(serverTime)],
      ['MaxAllowedSkewMilliseconds', String(maxSkewMs)],
    ]),
  requestNotYetValid: (amzDate: string, serverTime: number) =>
    s3Error(403, 'AccessDenied', 'Request is not yet valid', [
      ['X-Amz-Date', amzDate],
      ['ServerTime', isoSeconds(serverTime)],
    ]),
  requestExpired: (expires: string, expiresAt: number, serverTime: number) =>
    s3Error(403, 'AccessDenied', 'Request has expired', [
      ['X-Amz-Expires', expires],
      ['Expires', isoSeconds(expiresAt)],
      ['ServerTime', isoSeconds(serverTime)],
    ]),
} as const;
