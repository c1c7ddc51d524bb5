/**
 * Version ids on the objstore's buckets, which are never versioned: every object is its one
 * version, whose id is `null`, as on an S3 bucket that never had versioning enabled. S3 takes
 * `null` wherever a version id may be given; any other id is refused.
 */
import { errors, GatewayError, type S3ErrorSpec } from '../../s3-errors.ts';
import { singleParam, type ParsedQuery } from '../target.ts';

/** The version id of an object in an unversioned bucket. */
export const NULL_VERSION_ID = 'null';

/** InvalidArgument for a version id other than `null`; null when it is `null` or none (null or undefined) is given. */
export function versionIdProblem(parameter: string, versionId: string | null | undefined): S3ErrorSpec | null {
  return versionId === null || versionId === undefined || versionId === NULL_VERSION_ID
    ? null
    : errors.invalidVersionId(parameter, versionId);
}

/** Throws versionIdProblem's error, if any. */
export function requireNullVersion(parameter: string, versionId: string | null | undefined): void {
  const problem = versionIdProblem(parameter, versionId);
  if (problem !== null) throw new GatewayError(problem);
}

/** Whether the request names a version (`versionId=null`); InvalidArgument for any other version id. */
export function namesNullVersion(query: ParsedQuery, parameter = 'versionId'): boolean {
  const versionId = singleParam(query, parameter);
  requireNullVersion(parameter, versionId);
  return versionId !== undefined;
}
