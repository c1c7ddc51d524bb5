/** The S3 errors the gateway answers with. */
import { ACCESS_DENIED_MESSAGE, INVALID_ACCESS_KEY_ID_MESSAGE } from '../s3-messages.ts';
import { s3Error, type ErrorDetail } from '../s3-errors.ts';

export const errors = {
  accessDenied: (message = ACCESS_DENIED_MESSAGE) => s3Error(403, 'AccessDenied', message),
  invalidAccessKeyId: () => s3Error(403, 'InvalidAccessKeyId', INVALID_ACCESS_KEY_ID_MESSAGE),
  signatureDoesNotMatch: (details?: readonly ErrorDetail[]) =>
    s3Error(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. ' +
        'Check your key and signing method.',
      details,
    ),
  authorizationHeaderMalformed: (detail: string) =>
    s3Error(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; ${detail}`),
  authorizationQueryParametersError: (message: string) =>
    s3Error(400, 'AuthorizationQueryParametersError', message),
  unsupportedAuthorizationType: () => s3Error(400, 'InvalidArgument', 'Unsupported Authorization Type'),
  multipleAuthMechanisms: () =>
    s3Error(
      400,
      'InvalidArgument',
      'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query ' +
        'string parameter or the Authorization header should be specified',
    ),
  invalidArgument: (message: string) => s3Error(400, 'InvalidArgument', message),
  invalidRequest: (message: string) => s3Error(400, 'InvalidRequest', message),
  invalidUri: () => s3Error(400, 'InvalidURI', "Couldn't parse the specified URI."),
  invalidBucketName: () => s3Error(400, 'InvalidBucketName', 'The specified bucket is not valid.'),
  keyTooLong: () => s3Error(400, 'KeyTooLongError', 'Your key is too long'),
  methodNotAllowed: () =>
    s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.'),
  noSuchUpload: () =>
    s3Error(
      404,
      'NoSuchUpload',
      'The specified upload does not exist. The upload ID may be invalid, or the upload may have ' +
        'been aborted or completed.',
    ),
  invalidPart: () =>
    s3Error(
      400,
      'InvalidPart',
      'One or more of the specified parts could not be found.  The part may not have been uploaded, ' +
        "or the specified entity tag may not have matched the part's entity tag.",
    ),
  invalidPartOrder: () =>
    s3Error(
      400,
      'InvalidPartOrder',
      'The list of parts was not in ascending order. Parts must be ordered by part number.',
    ),
  malformedXml: () =>
    s3Error(
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema',
    ),
  maxMessageLengthExceeded: () => s3Error(400, 'MaxMessageLengthExceeded', 'Your request was too big.'),
  entityTooSmall: () =>
    s3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.'),
  noSuchBucket: (bucket: string) => s3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', [['BucketName', bucket]]),
  noSuchKey: (key: string) => s3Error(404, 'NoSuchKey', 'The specified key does not exist.', [['Key', key]]),
  internalError: () => s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.'),
} as const;
