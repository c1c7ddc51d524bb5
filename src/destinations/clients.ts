import type { S3Client } from '@aws-sdk/client-s3';

type Sdk = typeof import('@aws-sdk/client-s3');
let sdk: Promise<Sdk> | null = null;

/** The AWS SDK takes a tenth of a second to load: only when the first S3 call is made, not at start. */
function loadSdk(): Promise<Sdk> {
  return (sdk ??= import('@aws-sdk/client-s3'));
}

/** An error answered by the store (the SDK's S3ServiceException), told apart without loading the SDK. */
function isServiceError(error: unknown): error is Error & { $metadata: { httpStatusCode?: number } } {
  return error instanceof Error && '$metadata' in error && '$fault' in error;
}

export interface ObjstoreCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where an S3 client sends its requests, and as whom. */
export interface ObjstoreConnection {
  endpoint: string;
  region: string;
  credentials: ObjstoreCredentials;
}

/**
 * Failures that retrying with the same key pair, bucket and endpoint cannot fix: refused
 * credentials or signatures, a missing or invalid bucket, a malformed endpoint. Anything
 * else (connection failures, time-outs, 5xx, SlowDown) may pass on a later attempt.
 */
const PERMANENT_CODES = new Set([
  'AccessDenied',
  'AccountProblem',
  'AllAccessDisabled',
  'ExpiredToken',
  'InvalidAccessKeyId',
  'InvalidBucketName',
  'InvalidEndpoint',
  'InvalidToken',
  'NoSuchBucket',
  'SignatureDoesNotMatch',
]);

/** A storage failure worded the way the real service's storage client words it. */
export class ObjstoreError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }

  get permanent(): boolean {
    return PERMANENT_CODES.has(this.code);
  }
}

export function invalidEndpoint(endpoint: string): ObjstoreError {
  return new ObjstoreError(`Invalid endpoint: ${endpoint}`, 'InvalidEndpoint');
}

/** Malformed endpoints are refused before any request, as the real service's storage client does. */
export function checkEndpoint(endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw invalidEndpoint(endpoint);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname || /\s/.test(endpoint)) {
    throw invalidEndpoint(endpoint);
  }
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'TimeoutError',
]);

/** Rewords an S3 client failure as `An error occurred (<Code>) when calling the <Operation> operation: <message>`. */
export function describeFailure(error: unknown, operation: string, endpoint: string): ObjstoreError {
  if (error instanceof ObjstoreError) return error;
  if (isServiceError(error)) {
    const code = error.name || `HTTP ${error.$metadata.httpStatusCode}`;
    const message = error.message && error.message !== 'UnknownError' ? error.message : code;
    return new ObjstoreError(`An error occurred (${code}) when calling the ${operation} operation: ${message}`, code);
  }
  const code = (error as { code?: string; name?: string }).code ?? (error as { name?: string }).name ?? '';
  if (CONNECTION_ERRORS.has(code)) {
    return new ObjstoreError(
      `Invalid endpoint: Could not connect to the endpoint URL: "${endpoint}"`,
      'EndpointConnectionError',
    );
  }
  return new ObjstoreError(
    `An error occurred when calling the ${operation} operation: ${String((error as Error).message ?? error)}`,
    'Unknown',
  );
}

const NODE_VERSION_NOTICE_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/**
 * Builds an SDK client without the SDK's notice about future Node versions, which concerns the
 * SDK localplane embeds, not the consumer's setup. The SDK reads that switch from the
 * environment alone, in the constructor: it is set for that synchronous call and put back.
 */
export function withoutNodeVersionNotice<T>(make: () => T): T {
  const before = process.env[NODE_VERSION_NOTICE_SWITCH];
  process.env[NODE_VERSION_NOTICE_SWITCH] = 'true';
  try {
    return make();
  } finally {
    if (before === undefined) delete process.env[NODE_VERSION_NOTICE_SWITCH];
    else process.env[NODE_VERSION_NOTICE_SWITCH] = before;
  }
}

/**
 * The S3 clients of one localplane instance, kept per endpoint and key pair (an SDK client is
 * costly to set up). Each instance has its own, so stopping one never touches another's.
 */
export class ObjstoreClients {
  private readonly clients = new Map<string, S3Client>();

  private async client(target: ObjstoreConnection): Promise<S3Client> {
    const { S3Client } = await loadSdk();
    const cacheKey = JSON.stringify([
      target.endpoint,
      target.region,
      target.credentials.accessKeyId,
      target.credentials.secretAccessKey,
    ]);
    let client = this.clients.get(cacheKey);
    if (!client) {
      client = withoutNodeVersionNotice(
        () =>
          new S3Client({
            endpoint: target.endpoint,
            region: target.region,
            credentials: target.credentials,
            forcePathStyle: true,
            maxAttempts: 1,
            // An endpoint that accepts connections but never answers fails as unreachable instead of hanging.
            // One connection per request: a pooled connection that sat idle while a run waited (the slow
            // knob) could be one the store had dropped, failing the next upload with ECONNRESET; the
            // embedded objstore is on loopback, where a new connection costs next to nothing.
            requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000, httpAgent: { keepAlive: false } },
            // A plain body with a checksum header, not aws-chunked framing.
            requestChecksumCalculation: 'WHEN_REQUIRED',
            responseChecksumValidation: 'WHEN_REQUIRED',
          }),
      );
      this.clients.set(cacheKey, client);
    }
    return client;
  }

  close(): void {
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
  }

  private async call<T>(
    target: ObjstoreConnection,
    operation: string,
    send: (client: S3Client, sdk: Sdk) => Promise<T>,
  ): Promise<T> {
    try {
      return await send(await this.client(target), await loadSdk());
    } catch (error) {
      throw describeFailure(error, operation, target.endpoint);
    }
  }

  putObject(target: ObjstoreConnection, bucket: string, key: string, body: Uint8Array | string, contentType: string) {
    return this.call(target, 'PutObject', (client, { PutObjectCommand }) =>
      client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType })),
    );
  }

  deleteObject(target: ObjstoreConnection, bucket: string, key: string) {
    return this.call(target, 'DeleteObject', (client, { DeleteObjectCommand }) =>
      client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })),
    );
  }

  /** Size of a stored object, or null when the key pair may not read it (get permission is optional). */
  async objectSize(target: ObjstoreConnection, bucket: string, key: string): Promise<number | null> {
    try {
      const { HeadObjectCommand } = await loadSdk();
      const head = await (await this.client(target)).send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return head.ContentLength ?? null;
    } catch (error) {
      if (isServiceError(error) && error.$metadata.httpStatusCode === 403) return null;
      throw describeFailure(error, 'HeadObject', target.endpoint);
    }
  }

  /**
   * Uploads a file: multipart above `partSize`, falling back to one PutObject when the key
   * pair may not use multipart uploads (that permission is optional for a destination).
   */
  async uploadFile(
    target: ObjstoreConnection,
    bucket: string,
    key: string,
    body: Uint8Array,
    partSize: number,
  ): Promise<void> {
    const contentType = 'application/octet-stream';
    if (body.byteLength <= partSize) {
      await this.putObject(target, bucket, key, body, contentType);
      return;
    }
    const client = await this.client(target);
    const {
      AbortMultipartUploadCommand,
      CompleteMultipartUploadCommand,
      CreateMultipartUploadCommand,
      UploadPartCommand,
    } = await loadSdk();
    let uploadId: string | undefined;
    try {
      uploadId = (
        await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }))
      ).UploadId;
    } catch (error) {
      if (isServiceError(error) && error.name === 'AccessDenied') {
        await this.putObject(target, bucket, key, body, contentType);
        return;
      }
      throw describeFailure(error, 'CreateMultipartUpload', target.endpoint);
    }
    try {
      const parts = [];
      for (let offset = 0, partNumber = 1; offset < body.byteLength; offset += partSize, partNumber++) {
        const part = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: body.subarray(offset, offset + partSize),
          }),
        );
        parts.push({ ETag: part.ETag, PartNumber: partNumber });
      }
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      await client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
      throw describeFailure(error, 'UploadPart', target.endpoint);
    }
  }
}
