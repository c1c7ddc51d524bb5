/**
 * The request pipeline in front of s3rver:
 *
 *   parse target -> classify operation -> extract credential -> look up key
 *   -> verify signature -> check permission (or: unsigned read of a public bucket) -> validate names
 *   -> strip authentication -> operation override or s3rver
 *
 * This dispatch is the one place that decides what goes to s3rver: operations without an
 * override, and the overrides' requests whose bucket does not exist (`inBucket`), which s3rver
 * answers with S3's NoSuchBucket.
 *
 * Every step that refuses a request throws a GatewayError, answered as an S3 XML error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { BucketDirectory } from '../bucket-directory.ts';
import type { ObjstoreStorage } from '../storage/storage.ts';
import { operationOverrides } from './operations/compat.ts';
import { S3_MIN_PART_SIZE, type OperationContext, type Override } from './operations/context.ts';
import type { Delegate } from './delegate.ts';
import { TurnTaking } from './turn-taking.ts';
import { extractCredential } from './auth/credentials.ts';
import { errors } from './errors.ts';
import { GatewayError, s3Error } from '../s3-errors.ts';
import { foreignHostMessage } from '../../shared/browser-guard.ts';
import { beginExchange, failExchange, sendContinue, type Exchange } from './exchange.ts';
import type { FileView } from '../file-view/file-view.ts';
import { followWrites } from './follow-writes.ts';
import type { S3Operation } from '../s3-operations.ts';
import { classifyOperation, type ClassifiedOperation, type OperationAccess } from './classify.ts';
import { NO_CHUNK_SIGNATURES, verifySignature } from './auth/signature.ts';
import type { ChunkSignatures } from './auth/sigv4.ts';
import { postObject } from './operations/post-object.ts';
import { requireSignedBody, requireWholeBodyPayload } from './bodies/signed-payload.ts';
import {
  hasParam,
  parseCopySource,
  parseTarget,
  singleParam,
  stripAuthentication,
  validateBucketName,
  validateObjectKey,
  validatePartNumber,
  validateUploadId,
  type RequestTarget,
} from './target.ts';
import type { ObjstoreFault, ObjstoreKey, ObjstoreKeyLookup, ObjstoreObserver } from '../types.ts';

export interface GatewayOptions {
  keys: ObjstoreKeyLookup;
  storage: ObjstoreStorage;
  /** Answers what the gateway does not answer itself. */
  delegate: Delegate;
  buckets: BucketDirectory;
  overrides?: Readonly<Partial<Record<S3Operation, Override>>>;
  /** Kept in step with every write before its response completes. */
  fileView?: FileView;
  /** Buckets anyone may read without signing. */
  publicBuckets?: ReadonlySet<string>;
  /** Wall-clock epoch milliseconds, for the request-time checks of signatures. */
  now?: () => number;
  observer?: ObjstoreObserver;
  /** The smallest size of a part but the last; default S3's 5 MiB. */
  minPartSize?: number;
  /** Whether a Host header names this objstore (a DNS-rebinding page's does not); default any. */
  acceptsHost?: (host: string | undefined) => boolean;
  /**
   * The CORS headers of the answer when the bucket's CORS configuration allows `origin` to send
   * `method`; null when it does not (or the bucket has none). Without it, every browser request is refused.
   */
  corsHeaders?: (bucket: string, origin: string, method: string) => Promise<Record<string, string> | null>;
}

/**
 * A browser's request, which carries `Origin` or a `Sec-Fetch-Site` other than `none` (typed by
 * the user) and `same-origin`: the origin it comes from, `null` for a no-cors request without one.
 * SDKs, the aws CLI, rclone and curl send neither, and get undefined.
 */
function browserOrigin(req: IncomingMessage): string | null | undefined {
  const { origin, 'sec-fetch-site': site } = req.headers;
  if (origin !== undefined) return origin;
  return site === undefined || site === 'none' || site === 'same-origin' ? undefined : null;
}

/** Answers one request; resolves (never rejects) once the gateway's own work for it is done (what it hands on: `Delegate.settled`). */
export type GatewayHandler = (req: IncomingMessage, res: ServerResponse, expectContinue: boolean) => Promise<void>;

/** What a request's signature shows: its key, the payload hash its body is held to, and the chunk signatures of that body. */
interface Admission {
  key: ObjstoreKey | null;
  payloadHash: string | null;
  chunkSignatures: ChunkSignatures;
}

/** An unsigned request (an anonymous read, or a browser form, which authenticates itself). */
const UNSIGNED: Admission = { key: null, payloadHash: null, chunkSignatures: NO_CHUNK_SIGNATURES };

/** Throws AccessDenied unless `key` may perform an operation with this access rule. */
export function authorize(access: OperationAccess, key: ObjstoreKey): void {
  switch (access.kind) {
    case 'refuse':
      throw new GatewayError(errors.accessDenied());
    case 'reject':
      throw new GatewayError(access.error);
    case 'require':
      for (const permission of access.permissions) {
        if (!key.permissions.includes(permission)) throw new GatewayError(errors.accessDenied());
      }
  }
}

/**
 * Throws AccessDenied when the request's bucket or object, or the source of a copy, is beyond
 * the key's reach: another account's bucket, another workspace's folder (bucket-directory.ts).
 * CreateBucket answers for a taken name itself (BucketAlreadyExists). Listings and
 * DeleteObjects keep to the key's reach themselves.
 */
export function authorizeBuckets(
  classified: ClassifiedOperation,
  target: RequestTarget,
  req: IncomingMessage,
  key: ObjstoreKey | null,
  buckets: BucketDirectory,
): void {
  const source = req.method === 'PUT' ? parseCopySource(req.headers) : null;
  const used = [classified.operation === 'CreateBucket' ? null : target, source];
  if (used.some((use) => use?.bucket != null && !buckets.mayReach(use.bucket, use.key, key))) {
    throw new GatewayError(errors.accessDenied());
  }
}

/** The reads an unsigned request may make, and only in a public bucket. */
const ANONYMOUS_READS = new Set<S3Operation>(['GetObject', 'HeadObject', 'ListObjects', 'ListObjectsV2', 'HeadBucket']);

/**
 * Throws AccessDenied unless an unsigned request reads a public bucket; NoSuchBucket for a
 * bucket that does not exist, as S3 answers anyone.
 */
export function authorizeAnonymous(classified: ClassifiedOperation, target: RequestTarget, publicBuckets: ReadonlySet<string>, buckets: BucketDirectory): void {
  if (target.bucket !== null && buckets.ownerOf(target.bucket) === undefined) throw new GatewayError(errors.noSuchBucket(target.bucket));
  const bucketIsPublic = target.bucket !== null && publicBuckets.has(target.bucket);
  if (!bucketIsPublic || !ANONYMOUS_READS.has(classified.operation)) throw new GatewayError(errors.accessDenied());
}

/**
 * Rejects names the store cannot hold (bucket names it would not take for a folder, keys over
 * S3's 1,024 bytes) and malformed multipart parameters s3rver would crash or misbehave on.
 */
export function validateRequest(classified: ClassifiedOperation, target: RequestTarget, req: IncomingMessage): void {
  if (target.bucket !== null) validateBucketName(target.bucket);
  if (target.key === null) return;
  validateObjectKey(target.key);
  if (hasParam(target.query, 'uploadId')) validateUploadId(singleParam(target.query, 'uploadId'));
  if (classified.operation === 'UploadPart' || classified.operation === 'UploadPartCopy') {
    validatePartNumber(singleParam(target.query, 'partNumber'));
  }
  if (req.method === 'PUT') parseCopySource(req.headers);
}

function readBody(exchange: Exchange, limit: number): Promise<Buffer> {
  const { req, res } = exchange;
  sendContinue(exchange);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Do not read the rest of an oversized body: close the connection after answering.
        res.setHeader('Connection', 'close');
        req.resume();
        reject(new GatewayError(errors.maxMessageLengthExceeded()));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      exchange.body = Buffer.concat(chunks);
      resolve(exchange.body);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onAborted = () => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

export function createGateway(options: GatewayOptions): GatewayHandler {
  const { keys, storage, delegate } = options;
  const overrides = options.overrides ?? operationOverrides;
  const publicBuckets = options.publicBuckets ?? new Set<string>();
  const now = options.now ?? Date.now;
  const conditionalWrites = new TurnTaking();
  const minPartSize = options.minPartSize ?? S3_MIN_PART_SIZE;

  /**
   * Authenticates and authorises the request; answers its key (null when unsigned), the payload
   * hash its body is held to and the chunk signatures of that body.
   */
  async function admit(exchange: Exchange, target: RequestTarget, classified: ClassifiedOperation): Promise<Admission> {
    const { req } = exchange;
    const credential = extractCredential(req.headers, target.query);
    if (credential === null) {
      // Stays unauthenticated for s3rver, which refuses anonymous reads response-* overrides as S3 does.
      authorizeAnonymous(classified, target, publicBuckets, options.buckets);
      return UNSIGNED;
    }
    exchange.accessKeyId = credential.accessKeyId;

    const key = keys.find(credential.accessKeyId);
    if (key === undefined) throw new GatewayError(errors.invalidAccessKeyId());

    const verdict = await verifySignature({ req, target, credential, key, now: new Date(now()) });
    if (verdict.error !== null) throw new GatewayError(verdict.error);

    authorize(classified.access, key);
    exchange.authenticated = true;
    return { key, payloadHash: verdict.payloadHash, chunkSignatures: verdict.chunks };
  }

  /**
   * Refuses a browser's request that the bucket's CORS configuration does not allow: the keys are
   * published, so a page on any site could sign with them (or send a form signed with them), and S3
   * would process what it sends even where the browser then hides the answer. An allowed one
   * answers with the rule's CORS headers, errors included, as S3 does.
   */
  async function admitBrowser(exchange: Exchange, target: RequestTarget): Promise<void> {
    const origin = browserOrigin(exchange.req);
    if (origin === undefined) return;
    const headers = origin !== null && target.bucket !== null ? await options.corsHeaders?.(target.bucket, origin, exchange.method) : null;
    if (!headers) {
      const from = origin ?? 'a page of another site';
      const where = target.bucket === null ? 'the objstore' : `bucket ${target.bucket}`;
      throw new GatewayError(s3Error(403, 'AccessDenied', `Cross-origin ${exchange.method} from ${from} refused: ${where} has no CORS rule that allows it (PutBucketCors)`));
    }
    for (const [name, value] of Object.entries(headers)) exchange.res.setHeader(name, value);
  }

  /** Answers the request with an observer's fault; false when there is none and the request goes on. */
  async function injectFault(exchange: Exchange): Promise<boolean> {
    const fault: ObjstoreFault | null = options.observer ? await options.observer.arrive(exchange.req) : null;
    if (fault === null) return false;
    if (fault.kind === 'error') {
      for (const [name, value] of Object.entries(fault.headers)) exchange.res.setHeader(name, value);
      throw new GatewayError(s3Error(fault.status, fault.code, fault.message));
    }
    if (fault.kind === 'reset') exchange.req.socket.resetAndDestroy();
    else exchange.req.socket.end();
    return true;
  }

  async function handleExchange(exchange: Exchange): Promise<void> {
    const { req } = exchange;
    // What an error document names until the target is parsed.
    exchange.resource = (req.url ?? '/').split('?')[0] || '/';
    if (options.acceptsHost && !options.acceptsHost(req.headers.host)) throw new GatewayError(s3Error(403, 'AccessDenied', foreignHostMessage(req.headers.host!)));
    if (await injectFault(exchange)) return;
    const target = parseTarget(req.url);
    exchange.bucket = target.bucket;
    exchange.key = target.key;
    exchange.resource = target.resource;

    const classified = classifyOperation(exchange.method, target, req.headers);
    exchange.operation = classified.operation;
    // A preflight changes nothing: s3rver answers it from the bucket's rules, without authentication, as S3 does.
    if (exchange.method === 'OPTIONS') {
      stripAuthentication(req, target);
      return delegate.handle(req, exchange.res);
    }
    await admitBrowser(exchange, target);
    // S3 names an existing bucket's region on HeadBucket whatever the answer, a 403 included:
    // clients find a bucket's region that way.
    const bucketRegion = classified.operation === 'HeadBucket' ? options.buckets.regionOf(target.bucket!) : undefined;
    if (bucketRegion !== undefined) exchange.res.setHeader('x-amz-bucket-region', bucketRegion);

    // A browser form upload carries its authentication in the form (post-object.ts), which also
    // checks the bucket's owner once it knows the form's key.
    const browserForm = classified.operation === 'PostObject';
    const { key, payloadHash, chunkSignatures } = browserForm ? UNSIGNED : await admit(exchange, target, classified);
    validateRequest(classified, target, req);
    if (!browserForm) authorizeBuckets(classified, target, req, key, options.buckets);

    stripAuthentication(req, target);

    const context: OperationContext = {
      exchange,
      target,
      storage,
      buckets: options.buckets,
      key,
      payloadHash,
      chunkSignatures,
      delegate: () => {
        sendContinue(exchange);
        delegate.handle(req, exchange.res);
      },
      readBody: async (limit) => {
        requireWholeBodyPayload(payloadHash);
        const body = await readBody(exchange, limit);
        requireSignedBody(body, payloadHash);
        return body;
      },
      now: () => new Date(now()),
      conditionalWrites,
      minPartSize,
    };
    if (browserForm) {
      return postObject(context, {
        keys,
        now: () => new Date(now()),
        authorizeBucket: (formKey, objectKey) => authorizeBuckets(classified, { ...target, key: objectKey }, req, formKey, options.buckets),
      });
    }
    const override = overrides[classified.operation];
    if (override === undefined) return context.delegate();
    if ('always' in override) return override.always(context);
    const answer = override.inBucket(context);
    if (!(await storage.bucketExists(target.bucket!))) return context.delegate();
    await answer(context);
  }

  return async (req, res, expectContinue) => {
    let exchange: Exchange;
    try {
      exchange = beginExchange(req, res, expectContinue, options.observer);
      if (options.fileView) followWrites(exchange, options.fileView);
    } catch {
      res.statusCode = 500;
      res.end();
      return;
    }
    const fail = (err: unknown) => {
      try {
        failExchange(exchange, err instanceof GatewayError ? err.spec : errors.internalError());
      } catch {
        res.destroy();
      }
    };
    try {
      await handleExchange(exchange);
    } catch (err) {
      fail(err);
    }
  };
}
