import type { IncomingMessage } from 'node:http';

import type { RequestCredential } from './credentials.ts';
import type { S3ErrorSpec } from './errors.ts';
import type { RequestTarget } from './target.ts';
import type { ObjstoreKey } from './types.ts';

export interface SignatureCheck {
  /** The request as received: headers untouched, `req.url` not yet rewritten. */
  req: IncomingMessage;
  /** Raw path and query as received, for the canonical request. */
  target: RequestTarget;
  credential: RequestCredential;
  /** The key the credential names; `key.secretAccessKey` derives the signing key. */
  key: ObjstoreKey;
  now: Date;
}

/**
 * Verifies the request signature against the key's secret.
 *
 * Not implemented yet: every request that names a known key is accepted. This is the one place
 * to add SigV4 verification (header and presigned), including the X-Amz-Date skew / X-Amz-Expires
 * checks and the `x-amz-content-sha256` payload hash (UNSIGNED-PAYLOAD, a hex digest that needs
 * the body, or STREAMING-* chunk signatures). SigV2 credentials are also passed here and should
 * be rejected or verified once verification exists.
 *
 * Returns null when the signature is acceptable, else the S3 error to answer with
 * (typically SignatureDoesNotMatch, AccessDenied "Request has expired", RequestTimeTooSkewed).
 * It runs before `stripAuthentication`, and must never log or return the secret.
 */
export function verifySignature(check: SignatureCheck): S3ErrorSpec | null {
  void check;
  return null;
}
