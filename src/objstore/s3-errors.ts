/**
 * The objstore's S3 error catalogue: every error it answers, with its status, code and message as
 * S3 words them and the elements S3 adds after the message, by what it is about. Every error
 * answer is built here; the one exception is a fault rule's error (`s3Error`), which the user
 * makes up. Throw `new GatewayError(errors.x(...))` to answer a request with one.
 */
import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm } from './checksum-algorithms.ts';
import { foreignHostMessage } from '../shared/browser-guard.ts';

/** An S3 error answer: status, code, message, and the elements after the message. */
export interface S3ErrorSpec {
  status: number;
  code: string;
  message: string;
  /** Further elements of the error document, after `Message`, as S3 adds to some errors. */
  details?: readonly ErrorDetail[];
}

/** One extra element of an error document: its name and its text. */
export type ErrorDetail = readonly [element: string, text: string];

/** An error as given: for a fault rule's, which the user makes up; every other comes from `errors`. */
export function s3Error(status: number, code: string, message: string, details?: readonly ErrorDetail[]): S3ErrorSpec {
  return details === undefined ? { status, code, message } : { status, code, message, details };
}

/** Thrown to answer the request with an S3 error (the gateway catches it). */
export class GatewayError extends Error {
  readonly spec: S3ErrorSpec;

  constructor(spec: S3ErrorSpec) {
    super(`${spec.code}: ${spec.message}`);
    this.name = 'GatewayError';
    this.spec = spec;
  }
}

/** S3's own messages that the destination check quotes as a client sees them. */
export const ACCESS_DENIED_MESSAGE = 'Access denied.';
export const INVALID_ACCESS_KEY_ID_MESSAGE = 'The Key ID you provided does not exist in our records.';

const argument = (name: string, value: string): ErrorDetail[] => [
  ['ArgumentName', name],
  ['ArgumentValue', value],
];
const inBucket = (bucket: string): ErrorDetail[] => [['BucketName', bucket]];
/** ISO 8601 to the second, as S3 writes ServerTime and Expires. */
const isoSeconds = (time: number) => new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');

const badRequest = (code: string, message: string, details?: readonly ErrorDetail[]) =>
  s3Error(400, code, message, details);
const invalidArgument = (message: string, details?: readonly ErrorDetail[]) =>
  badRequest('InvalidArgument', message, details);
const invalidRequest = (message: string) => badRequest('InvalidRequest', message);
const accessDenied = (message: string, details?: readonly ErrorDetail[]) =>
  s3Error(403, 'AccessDenied', message, details);
const notImplemented = (message: string, details?: readonly ErrorDetail[]) =>
  s3Error(501, 'NotImplemented', message, details);
const headerMalformed = (detail: string) =>
  badRequest('AuthorizationHeaderMalformed', `The authorization header is malformed; ${detail}`);
const queryParametersError = (message: string) => badRequest('AuthorizationQueryParametersError', message);
// An X-Amz-Expires out of range is 403, as the S3 conformance suite (ceph s3-tests,
// test_object_raw_get_x_amz_expires_out_*) expects of S3; other malformed query parameters are 400.
const expiresRefused = (message: string) => s3Error(403, 'AuthorizationQueryParametersError', message);

const V4_CREDENTIAL_SHAPE =
  'the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".';
const MALFORMED_XML = 'The XML you provided was not well-formed or did not validate against our published schema';
const HEADER_NOT_IMPLEMENTED = 'A header you provided implies functionality that is not implemented';
const PRECONDITION_FAILED = 'At least one of the pre-conditions you specified did not hold';
const INT32_MAX = 2147483647;
const lower = (algorithm: ChecksumAlgorithm) => algorithm.toLowerCase();

export const errors = {
  // --- Any request ------------------------------------------------------------------------
  internalError: () => s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.'),
  invalidUri: () => badRequest('InvalidURI', "Couldn't parse the specified URI."),
  /** With the method and the resource (a subresource's name in capitals) when S3 names them. */
  methodNotAllowed: (method?: string, resourceType?: string) =>
    s3Error(
      405,
      'MethodNotAllowed',
      'The specified method is not allowed against this resource.',
      method === undefined || resourceType === undefined
        ? undefined
        : [
            ['Method', method],
            ['ResourceType', resourceType],
          ],
    ),
  repeatedQueryParameter: (name: string) => invalidArgument(`Query parameter ${name} must not be repeated.`),
  conflictingQueryParameters: (names: readonly string[]) =>
    invalidArgument(`Conflicting query string parameters: ${names.join(', ')}`),
  malformedXml: () => badRequest('MalformedXML', MALFORMED_XML),
  maxMessageLengthExceeded: () => badRequest('MaxMessageLengthExceeded', 'Your request was too big.'),
  invalidBucketName: (bucket?: string) =>
    badRequest(
      'InvalidBucketName',
      'The specified bucket is not valid.',
      bucket === undefined ? undefined : inBucket(bucket),
    ),
  keyTooLong: () => badRequest('KeyTooLongError', 'Your key is too long'),
  noSuchBucket: (bucket: string) =>
    s3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', inBucket(bucket)),
  noSuchKey: (key: string) => s3Error(404, 'NoSuchKey', 'The specified key does not exist.', [['Key', key]]),

  // --- Who may ask ------------------------------------------------------------------------
  accessDenied: () => accessDenied(ACCESS_DENIED_MESSAGE),
  /** A Host header that names no address of this objstore (a DNS-rebinding page's). */
  foreignHost: (host: string) => accessDenied(foreignHostMessage(host)),
  /** A browser's request that the bucket's CORS rules do not allow (`where`: the bucket, or the objstore). */
  crossOriginRefused: (method: string, from: string, where: string) =>
    accessDenied(
      `Cross-origin ${method} from ${from} refused: ${where} has no CORS rule that allows it (PutBucketCors)`,
    ),
  invalidAccessKeyId: () => s3Error(403, 'InvalidAccessKeyId', INVALID_ACCESS_KEY_ID_MESSAGE),
  signatureDoesNotMatch: (details?: readonly ErrorDetail[]) =>
    s3Error(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing ' +
        'method.',
      details,
    ),
  unsupportedAuthorizationType: () => invalidArgument('Unsupported Authorization Type'),
  multipleAuthMechanisms: () =>
    invalidArgument(
      'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string ' +
        'parameter or the ' +
        'Authorization header should be specified',
    ),
  /** SigV2, as a region that only takes SigV4 refuses it. */
  signatureVersionNotSupported: () =>
    invalidRequest('The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.'),
  malformedAuthorizationComponent: (component: string) =>
    headerMalformed(`the authorization component "${component}" is malformed.`),
  missingAuthorizationComponent: (name: string) => headerMalformed(`missing ${name}.`),
  malformedHeaderCredential: () => headerMalformed(V4_CREDENTIAL_SHAPE),
  malformedSigV2Header: () =>
    invalidArgument('AWS authorization header is invalid.  Expected AwsAccessKeyId:signature'),
  repeatedAuthQueryParameter: (name: string) => queryParametersError(`${name} must be specified only once.`),
  missingV4QueryParameters: () =>
    queryParametersError(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, ' +
        'X-Amz-Date, ' +
        'X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    ),
  unsupportedQueryAlgorithm: () =>
    queryParametersError('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256"'),
  malformedQueryCredential: () =>
    queryParametersError(`Error parsing the X-Amz-Credential parameter; ${V4_CREDENTIAL_SHAPE}`),
  missingSigV2QueryParameters: () =>
    accessDenied('Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters'),
  missingContentSha256: () => invalidRequest('Missing required header for this request: x-amz-content-sha256'),
  invalidContentSha256: (value: string) =>
    invalidArgument(
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD, ' +
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, ' +
        'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value.',
      argument('x-amz-content-sha256', value),
    ),
  missingRequestDate: () => accessDenied('AWS authentication requires a valid Date or x-amz-date header'),
  invalidPresignedDate: () =>
    queryParametersError(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`),
  expiresNotANumber: () => expiresRefused('X-Amz-Expires should be a number'),
  expiresNegative: () => expiresRefused('X-Amz-Expires must be non-negative'),
  expiresTooLong: (maxSeconds: number) =>
    expiresRefused(
      `X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less ` +
        `than ${maxSeconds} seconds`,
    ),
  /** A credential scope S3 does not take: `detail` says which part is wrong. */
  badScope: (presigned: boolean, detail: string) =>
    presigned
      ? queryParametersError(`Error parsing the X-Amz-Credential parameter; ${detail}`)
      : headerMalformed(detail),
  scopeDateMismatch: (presigned: boolean, scopeDate: string, requestDate: string) => {
    const detail = `Invalid credential date "${scopeDate}". This date is not the same as X-Amz-Date: "${requestDate}".`;
    return presigned ? queryParametersError(detail) : headerMalformed(detail);
  },
  headersNotSigned: (names: readonly string[]) =>
    accessDenied('There were headers present in the request which were not signed', [
      ['HeadersNotSigned', names.join(', ')],
    ]),
  requestTimeTooSkewed: (requestTime: string, serverTime: number, maxSkewMs: number) =>
    s3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', [
      ['RequestTime', requestTime],
      ['ServerTime', isoSeconds(serverTime)],
      ['MaxAllowedSkewMilliseconds', String(maxSkewMs)],
    ]),
  requestNotYetValid: (amzDate: string, serverTime: number) =>
    accessDenied('Request is not yet valid', [
      ['X-Amz-Date', amzDate],
      ['ServerTime', isoSeconds(serverTime)],
    ]),
  requestExpired: (expires: string, expiresAt: number, serverTime: number) =>
    accessDenied('Request has expired', [
      ['X-Amz-Expires', expires],
      ['Expires', isoSeconds(expiresAt)],
      ['ServerTime', isoSeconds(serverTime)],
    ]),

  // --- Request bodies: framing (aws-chunked, forms), lengths, digests --------------------
  /** Chunk framing that cannot be parsed, or a body that ends before its final chunk. */
  incompleteBody: () => badRequest('IncompleteBody', 'The request body terminated unexpectedly'),
  /** The decoded body is shorter or longer than `x-amz-decoded-content-length`. */
  decodedLengthMismatch: () =>
    badRequest('IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header'),
  missingContentLength: () => s3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.'),
  /** `Transfer-Encoding: chunked` around a body that is not aws-chunked. */
  transferEncodingNotImplemented: () => notImplemented(HEADER_NOT_IMPLEMENTED),
  /** A STREAMING-* payload hash on an operation whose body is not an upload. */
  streamingPayloadNotImplemented: () => notImplemented(HEADER_NOT_IMPLEMENTED, [['Header', 'x-amz-content-sha256']]),
  /** A payload hash an upload's body cannot be framed by. */
  unsupportedPayloadHash: () =>
    invalidArgument(
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, ' +
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD, ' +
        'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, or a valid sha256 value.',
    ),
  entityTooLarge: () => badRequest('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size'),
  /**
   * The memory storage's byte budget is spent. S3 has no such error; this is WebDAV's 507, as
   * MinIO answers a full drive (XMinioStorageFull), and no SDK retries it.
   */
  insufficientStorage: (budgetBytes: number) =>
    s3Error(
      507,
      'InsufficientStorage',
      `The objstore's memory storage is full: it keeps at most ${Math.floor(budgetBytes / 2 ** 20)} MB of objects ` +
        `and upload parts ` +
        '(objstore_memory_limit_mb, PATCH /_localplane/config). Delete objects or raise the limit.',
    ),
  invalidChunkSize: () =>
    s3Error(403, 'InvalidChunkSizeError', 'Only the last chunk is allowed to have a size less than 8192 bytes'),
  malformedTrailer: () =>
    badRequest(
      'MalformedTrailerError',
      'The request contained trailing data that was not well-formed or did not conform to our published schema.',
    ),
  contentSha256Mismatch: () =>
    badRequest(
      'XAmzContentSHA256Mismatch',
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    ),
  invalidContentMd5: () => badRequest('InvalidDigest', 'The Content-MD5 you specified was invalid.'),
  badContentMd5: () => badRequest('BadDigest', 'The Content-MD5 you specified did not match what we received.'),
  badChecksum: (algorithm: ChecksumAlgorithm) =>
    badRequest('BadDigest', `The ${algorithm} you specified did not match the calculated checksum.`),
  invalidChecksumValue: (headerName: string, where: 'header' | 'trailing header') =>
    invalidRequest(`Value for ${headerName} ${where} is invalid.`),
  multipleChecksums: () =>
    invalidRequest('Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.'),
  unsupportedTrailer: () => invalidRequest('The value specified in the x-amz-trailer header is not supported'),
  unsupportedChecksumAlgorithm: () =>
    invalidRequest(
      `Checksum algorithm provided is unsupported. Please try again with any of the valid types: ` +
        `[${CHECKSUM_ALGORITHMS.join(', ')}]`,
    ),
  sdkAlgorithmWithoutChecksum: () =>
    invalidRequest(
      'x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were ' +
        'found.',
    ),

  // --- Buckets and listings ---------------------------------------------------------------
  bucketAlreadyOwnedByYou: (bucket: string) =>
    s3Error(
      409,
      'BucketAlreadyOwnedByYou',
      'Your previous request to create the named bucket succeeded and you already own it.',
      inBucket(bucket),
    ),
  bucketAlreadyExists: (bucket: string) =>
    s3Error(
      409,
      'BucketAlreadyExists',
      'The requested bucket name is not available. The bucket namespace is shared by all users of the system. ' +
        'Please select a different name and try again.',
      inBucket(bucket),
    ),
  bucketNotEmpty: (bucket: string) =>
    s3Error(409, 'BucketNotEmpty', 'The bucket you tried to delete is not empty', inBucket(bucket)),
  invalidLocationConstraint: (constraint: string) =>
    badRequest('InvalidLocationConstraint', 'The specified location-constraint is not valid', [
      ['LocationConstraint', constraint],
    ]),
  invalidMaxBuckets: (max: number) => invalidArgument(`Argument max-buckets must be an integer between 1 and ${max}`),
  invalidEncodingType: () => invalidArgument('Invalid Encoding Method specified in Request'),
  notAnInteger: (name: string) => invalidArgument(`Provided ${name} not an integer or within integer range`),
  /** `argumentName` is how S3 names the parameter in this message (`maxKeys` for `max-keys`). */
  negativeArgument: (argumentName: string) =>
    invalidArgument(`Argument ${argumentName} must be an integer between 0 and ${INT32_MAX}`),
  markerInListV2: () => invalidArgument('Marker unsupported with REST.GET.BUCKET in list-type=2'),
  continuationTokenInListV1: () =>
    invalidArgument('continuation-token only supported in REST.GET.BUCKET with list-type=2'),
  startAfterInListV1: () => invalidArgument('startAfter only supported in REST.GET.BUCKET with list-type=2'),
  invalidContinuationToken: () => invalidArgument('The continuation token provided is incorrect'),
  versionIdMarkerWithoutKeyMarker: () =>
    invalidArgument('A version-id marker cannot be specified without a key marker.'),
  invalidUploadIdMarker: () => invalidArgument('Invalid uploadId marker'),
  /** A version id an unversioned bucket does not have; `argumentName` is the parameter that carried it. */
  invalidVersionId: (argumentName: string, value: string) =>
    invalidArgument('Invalid version id specified', argument(argumentName, value)),

  // --- Objects: reads, conditions, headers, copies ----------------------------------------
  preconditionFailed: (condition: string) =>
    s3Error(412, 'PreconditionFailed', PRECONDITION_FAILED, [['Condition', condition]]),
  /** A write condition S3 does not take; S3 names If-None-Match for `If-Match: *` too. */
  unsupportedWriteCondition: (header: string, detail: string) =>
    notImplemented(HEADER_NOT_IMPLEMENTED, [
      ['Header', header],
      ['additionalMessage', detail],
    ]),
  invalidRange: (requested: string, size: number) =>
    s3Error(416, 'InvalidRange', 'The requested range is not satisfiable', [
      ['RangeRequested', requested],
      ['ActualObjectSize', String(size)],
    ]),
  rangeAndPartNumber: () => invalidRequest('Cannot specify both Range header and partNumber query parameter'),
  partNumberNotSatisfiable: () => s3Error(416, 'InvalidPartNumber', 'The requested partnumber is not satisfiable'),
  notOverridableHeader: (name: string, value: string) =>
    invalidArgument(
      `${name} is not in the set of overridable response headers. Please refer to the S3 API documentation for a ` +
        `complete list of overridable response headers.`,
      argument(name, value),
    ),
  anonymousResponseOverrides: () =>
    invalidRequest('Request specific response headers cannot be used for anonymous GET requests.'),
  missingObjectAttributes: () =>
    invalidRequest(
      'The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty',
    ),
  invalidObjectAttribute: () => invalidArgument('Invalid attribute name specified.'),
  invalidAttributesHeader: (name: string) => invalidArgument(`Invalid ${name} value.`),
  invalidStorageClass: () => badRequest('InvalidStorageClass', 'The storage class you specified is not valid'),
  websiteRedirectLocation: () =>
    invalidArgument("The website redirect location must have a prefix of 'http://' or 'https://' or '/'."),
  /** `what`: the part of `x-amz-copy-source` that is wrong. */
  invalidCopySource: (what: 'version id' | 'encoding' | 'bucket name' | 'object key') =>
    invalidArgument(`Invalid copy source ${what}.`),
  copyOntoItself: () =>
    invalidRequest(
      'This copy request is illegal because it is trying to copy an object to itself without changing the ' +
        "object's metadata, " +
        'storage class, website redirect location or encryption attributes.',
    ),

  // --- Multipart uploads ------------------------------------------------------------------
  noSuchUpload: () =>
    s3Error(
      404,
      'NoSuchUpload',
      'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or ' +
        'completed.',
    ),
  invalidPartNumber: () => invalidArgument('Part number must be an integer between 1 and 10000, inclusive'),
  invalidPart: () =>
    badRequest(
      'InvalidPart',
      'One or more of the specified parts could not be found.  The part may not have been uploaded, or the ' +
        "specified entity tag may not have matched the part's entity tag.",
    ),
  invalidPartOrder: () =>
    badRequest(
      'InvalidPartOrder',
      'The list of parts was not in ascending order. Parts must be ordered by part number.',
    ),
  entityTooSmall: () =>
    badRequest('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.'),
  invalidObjectSize: () => invalidArgument('Value for x-amz-mp-object-size header is invalid.'),
  objectSizeMismatch: () =>
    invalidRequest("The provided 'x-amz-mp-object-size' header does not match what was computed."),
  checksumTypeWithoutAlgorithm: () =>
    invalidRequest('The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.'),
  invalidChecksumType: () => invalidRequest('Value for x-amz-checksum-type header is invalid.'),
  checksumTypeNotForAlgorithm: (type: string, algorithm: ChecksumAlgorithm) =>
    invalidRequest(`The ${type} checksum type cannot be used with the ${lower(algorithm)} checksum algorithm.`),
  partChecksumTypeMismatch: (expected: ChecksumAlgorithm, actual: ChecksumAlgorithm | null) =>
    invalidRequest(
      `Checksum Type mismatch occurred, expected checksum Type: ${lower(expected)}, actual checksum ` +
        `Type: ${actual === null ? 'null' : lower(actual)}`,
    ),
  missingPartChecksum: (algorithm: ChecksumAlgorithm, partNumber: number) =>
    invalidRequest(
      `The upload was created using a ${lower(algorithm)} checksum. The complete request must include the ` +
        `checksum for each part. ` +
        `It was missing for part ${partNumber} in the request.`,
    ),
  multiplePartChecksums: () => invalidArgument('Multiple checksum types are not allowed for a single part.'),
  completionChecksumTypeMismatch: (type: string) =>
    invalidRequest(
      `The upload was created using the ${type} checksum mode. The complete request must use the same checksum mode.`,
    ),
  malformedCopyRange: (value: string) =>
    invalidArgument(
      'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the ' +
        'zero-based offsets of the first and last bytes to copy',
      argument('x-amz-copy-source-range', value),
    ),
  copyRangeStartsPastSource: () => invalidRequest('The specified copy range is invalid for the source object size'),
  copyRangeEndsPastSource: (value: string, size: number) =>
    invalidArgument(
      `Range specified is not valid for source object of size: ${size}`,
      argument('x-amz-copy-source-range', value),
    ),

  // --- Browser form uploads (POST object) and their policies ------------------------------
  notAForm: () =>
    s3Error(412, 'PreconditionFailed', PRECONDITION_FAILED, [
      ['Condition', 'Bucket POST must be of the enclosure-type multipart/form-data'],
    ]),
  malformedForm: () =>
    badRequest('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.'),
  /** A form without a file part (or whose `file` field is not a file). */
  noFormFile: () => invalidArgument('POST requires exactly one file upload per request.', argument('file', '0')),
  /** More than `limit` bytes of a form before its file's content (S3's words, spelling included). */
  formFieldsTooLarge: (limit: number) =>
    badRequest('MaxPostPreDataLengthExceeded', 'Your POST request fields preceeding the upload file was too large.', [
      ['MaxPostPreDataLengthBytes', String(limit)],
    ]),
  missingFormField: (name: string) =>
    invalidArgument(
      `Bucket POST must contain a field named '${name}'.  If it is specified, please check the order of the fields.`,
      argument(name, ''),
    ),
  emptyFormKey: () => invalidArgument('User key must have a length greater than 0.'),
  malformedFormCredential: (credential: string) =>
    invalidArgument(
      `Error parsing the X-Amz-Credential parameter; ${V4_CREDENTIAL_SHAPE}`,
      argument('x-amz-credential', credential),
    ),
  invalidPolicy: (problem: string) => badRequest('InvalidPolicyDocument', `Invalid Policy: ${problem}`),
  deniedByPolicy: (reason: string) => accessDenied(`Invalid according to Policy: ${reason}`),
  formTooSmall: (size: number, min: number) =>
    badRequest('EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size', [
      ['ProposedSize', String(size)],
      ['MinSizeAllowed', String(min)],
    ]),
  formTooLarge: (size: number, max: number) =>
    badRequest('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', [
      ['ProposedSize', String(size)],
      ['MaxSizeAllowed', String(max)],
    ]),

  // --- CORS: configurations and preflights ------------------------------------------------
  corsUnsupportedMethod: (method: string) =>
    invalidRequest(`Found unsupported HTTP method in CORS config. Unsupported method is ${method}`),
  corsTwoWildcards: (element: string, value: string) =>
    invalidRequest(`${element} "${value}" can not have more than one wildcard.`),
  noSuchCorsConfiguration: (bucket: string) =>
    s3Error(404, 'NoSuchCORSConfiguration', 'The CORS configuration does not exist', inBucket(bucket)),
  preflightWithoutOrigin: () => badRequest('BadRequest', 'Insufficient information. Origin request header needed.'),
  preflightWithoutMethod: () => badRequest('BadRequest', 'Invalid Access-Control-Request-Method: null'),
  corsNotEnabled: () => s3Error(403, 'CORSResponse', 'CORS is not enabled for this bucket.'),
  corsNotAllowed: () =>
    s3Error(
      403,
      'CORSResponse',
      'This CORS request is not allowed. This is usually because the evalution of Origin, request method / ' +
        ("Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS " +
          'spec.'),
    ),

  // --- What is not emulated ---------------------------------------------------------------
  /** Worded as s3rver worded it for the subresources it did not emulate either. */
  notImplemented: () => notImplemented('A parameter you provided implies functionality that is not implemented'),
  noSuchBucketPolicy: (bucket: string) =>
    s3Error(404, 'NoSuchBucketPolicy', 'The bucket policy does not exist', inBucket(bucket)),
  noSuchTagSet: (bucket: string) => s3Error(404, 'NoSuchTagSet', 'The TagSet does not exist', inBucket(bucket)),
  noSuchLifecycleConfiguration: (bucket: string) =>
    s3Error(404, 'NoSuchLifecycleConfiguration', 'The lifecycle configuration does not exist', inBucket(bucket)),
  noSuchWebsiteConfiguration: (bucket: string) =>
    s3Error(
      404,
      'NoSuchWebsiteConfiguration',
      'The specified bucket does not have a website configuration',
      inBucket(bucket),
    ),
  noReplicationConfiguration: (bucket: string) =>
    s3Error(
      404,
      'ReplicationConfigurationNotFoundError',
      'The replication configuration was not found',
      inBucket(bucket),
    ),
  noObjectLockConfiguration: (bucket: string) =>
    s3Error(
      404,
      'ObjectLockConfigurationNotFoundError',
      'Object Lock configuration does not exist for this bucket',
      inBucket(bucket),
    ),
  missingObjectLockConfiguration: () => invalidRequest('Bucket is missing Object Lock Configuration'),
} as const;
