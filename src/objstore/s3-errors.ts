/**
 * S3 errors as the objstore answers them: what an error document says, and the error thrown (by
 * the gateway, or by storage refusing what it is given) to answer a request with one.
 */

/** An S3 error the gateway answers with itself (s3rver renders its own errors). */
export interface S3ErrorSpec {
  status: number;
  code: string;
  message: string;
  /** Further elements of the error document, after `Message`, as S3 adds to some errors. */
  details?: readonly ErrorDetail[];
}

/** One extra element of an error document: its name and its text. */
export type ErrorDetail = readonly [element: string, text: string];

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
