import type { IdGenerator } from '../shared/ids.ts';
import type { ObjstoreClients, ObjstoreError, ObjstoreConnection } from '../destinations/clients.ts';
import { ACCESS_DENIED_MESSAGE, INVALID_ACCESS_KEY_ID_MESSAGE } from '../objstore/s3-errors.ts';
import { HttpError } from '../shared/errors.ts';
import { VALIDATION_FAILURES, type BulkExportFaults, type ValidationFailure } from './faults.ts';
import { probeKey } from './paths.ts';
import type { DestinationConfig, DestinationCredentials } from './schemas.ts';

export interface DestinationCheckDeps {
  ids: IdGenerator;
  faults: BulkExportFaults;
  objstoreClients: ObjstoreClients;
  /** Where a destination's endpoint_url is served from; the embedded objstore binds its port on first use. */
  resolveEndpoint: (endpointUrl: string | null | undefined) => Promise<string>;
}

const NO_SUCH_BUCKET =
  'An error occurred (NoSuchBucket) when calling the PutObject operation: The specified bucket does not exist';

/** The words the storage side would have used, for a failure forced by a knob. */
function forcedFailure(failure: ValidationFailure, endpointUrl: string): string {
  switch (failure) {
    case 'access_denied':
      return `An error occurred (AccessDenied) when calling the PutObject operation: ${ACCESS_DENIED_MESSAGE}`;
    case 'unknown_key_id':
      return (
        `An error occurred (InvalidAccessKeyId) when calling the PutObject ` +
        `operation: ${INVALID_ACCESS_KEY_ID_MESSAGE}`
      );
    case 'invalid_endpoint':
      return `Invalid endpoint: ${endpointUrl}`;
    case 'invalid_bucket':
      return `Bucket is not valid: ${NO_SUCH_BUCKET}`;
  }
}

const validationFailedDetail = (message: string) => `Failed to validate objstore destination: ${message}`;

function validationFailed(message: string): HttpError {
  return new HttpError(400, validationFailedDetail(message));
}

/**
 * The detail of each failure the validation knob (or `Prefer: example=<name>`) forces, for a destination at this
 * endpoint.
 */
export function forcedFailureDetails(endpointUrl: string): Record<ValidationFailure, string> {
  return Object.fromEntries(
    VALIDATION_FAILURES.map((failure) => [failure, validationFailedDetail(forcedFailure(failure, endpointUrl))]),
  ) as Record<ValidationFailure, string>;
}

/**
 * Validates a destination the way the real service does: writes a temporary `.txt` under
 * `<prefix>/tmp/` with the given key pair, then deletes it best-effort (a key pair without
 * delete permission leaves it behind). Throws a 400 carrying the storage side's own words.
 */
export async function checkDestination(
  deps: DestinationCheckDeps,
  workspaceId: string,
  config: DestinationConfig,
  credentials: DestinationCredentials | null | undefined,
): Promise<void> {
  const endpointUrl = config.endpoint_url ?? '';
  const forced = deps.faults.takeValidation(workspaceId, config.endpoint_url ?? null);
  if (forced) throw validationFailed(forcedFailure(forced, endpointUrl));
  if (!credentials) {
    throw validationFailed('credentials are required: localplane cannot assume role_arn roles');
  }
  if (!config.bucket_name) throw validationFailed('Bucket is not valid: bucket_name is required');
  let target: ObjstoreConnection;
  try {
    target = {
      endpoint: await deps.resolveEndpoint(config.endpoint_url),
      region: config.region ?? 'us-east-1',
      credentials: {
        accessKeyId: credentials.access_key_id,
        secretAccessKey: credentials.secret_access_key,
        ...(credentials.session_token ? { sessionToken: credentials.session_token } : {}),
      },
    };
  } catch (error) {
    throw validationFailed((error as Error).message);
  }
  const key = probeKey(config.prefix, deps.ids.uuid());
  try {
    await deps.objstoreClients.putObject(
      target,
      config.bucket_name,
      key,
      'localplane destination validation\n',
      'text/plain',
    );
  } catch (error) {
    const failure = error as ObjstoreError;
    throw validationFailed(
      failure.code === 'NoSuchBucket' ? `Bucket is not valid: ${failure.message}` : failure.message,
    );
  }
  await deps.objstoreClients.deleteObject(target, config.bucket_name, key).catch(() => undefined);
}
