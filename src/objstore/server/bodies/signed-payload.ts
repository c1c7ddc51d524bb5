/**
 * The payload hash a request was signed with, held against the body received as S3 holds it: a
 * hex SHA-256 must be the body's (XAmzContentSHA256Mismatch), UNSIGNED-PAYLOAD binds nothing, and
 * a STREAMING-* payload hash announces an aws-chunked body signed chunk by chunk, which only
 * uploads are sent as (PutObject, UploadPart: body.ts). The bodies the gateway reads whole
 * (DeleteObjects, CreateBucket, CompleteMultipartUpload, PutObjectTagging) are checked here.
 */
import { createHash } from 'node:crypto';

import { errors, GatewayError } from '../../s3-errors.ts';

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** The SHA-256 (lower-case hex) a payload hash binds the body to; null when it binds none. */
export function signedContentSha256(payloadHash: string | null): string | null {
  return payloadHash !== null && HEX_SHA256.test(payloadHash) ? payloadHash.toLowerCase() : null;
}

/** Throws before a body to be read whole is read when it comes as signed chunks, which only uploads take. */
export function requireWholeBodyPayload(payloadHash: string | null): void {
  if (payloadHash?.startsWith('STREAMING-')) throw new GatewayError(errors.streamingPayloadNotImplemented());
}

/** Throws XAmzContentSHA256Mismatch unless a body read whole is the one signed. */
export function requireSignedBody(body: Buffer, payloadHash: string | null): void {
  const expected = signedContentSha256(payloadHash);
  if (expected !== null && createHash('sha256').update(body).digest('hex') !== expected) {
    throw new GatewayError(errors.contentSha256Mismatch());
  }
}
