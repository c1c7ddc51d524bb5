/**
 * The objstore's request pipeline:
 *
 *   parse target -> classify operation -> (a fault rule: answered here) -> (a preflight: answered
 *   here) -> browser's origin allowed -> extract credential -> look up key -> verify signature ->
 *   check permission (or: unsigned read of a public bucket) -> validate names -> the operation's
 *   handler (operations/dispatch.ts)
 *
 * Every step that refuses a request throws a GatewayError, answered as an S3 XML error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { BucketDirectory } from '../bucket-directory.ts';
import type { ObjstoreStorage } from '../storage/storage.ts';
import { OPERATION_HANDLERS } from './operations/dispatch.ts';
import { S3_MIN_PART_SIZE, type OperationContext } from './operations/context.ts';
import { corsHeaders, corsRulesOf, matchCorsRule } from './cors.ts';
import { TurnTaking } from './turn-taking.ts';
import { extractCredential } from './auth/credentials.ts';
import { errors, GatewayError, s3Error } from '../s3-errors.ts';
import { beginExchange, failExchange, sendContinue, type Exchange } from './exchange.ts';
import type { FileView } from '../file-view/file-view.ts';
import { followWrites } from './follow-writes.ts';
import type { S3Operation } from '../s3-operations.ts';
import { classifyOperation, type ClassifiedOperation, type OperationAccess } from './classify.ts';
import { NO_CHUNK_SIGNATURES, verifySignature } from './auth/signature.ts';
import type { ChunkSignatures } from './auth/sigv4.ts';
import { requireSignedBody, requireWholeBodyPayload } from './bodies/signed-payload.ts';
import {
  hasParam,
  parseCopySource,
  parseTarget,
  singleParam,
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
  buckets: BucketDirectory;
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

/** Answers one request; resolves (never rejects) once the gateway's work for it is done. */
export type GatewayHandler = (req: IncomingMessage, res: ServerResponse, expectContinue: boolean) => Promise<void>;

/**
 * What a request's signature shows: its key, the payload hash its body is held to, and the chunk signatures of that
 * body.
 */
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
    case 'anyone':
      return;
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
export function authorizeAnonymous(
  classified: ClassifiedOperation,
  target: RequestTarget,
  publicBuckets: ReadonlySet<string>,
  buckets: BucketDirectory,
): void {
  if (target.bucket !== null && buckets.ownerOf(target.bucket) === undefined)
    throw new GatewayError(errors.noSuchBucket(target.bucket));
  const bucketIsPublic = target.bucket !== null && publicBuckets.has(target.bucket);
  if (!bucketIsPublic || !ANONYMOUS_READS.has(classified.operation)) throw new GatewayError(errors.accessDenied());
}

/**
 * Rejects names the storage cannot hold (bucket names it would not take for a folder, keys over
 * S3's 1,024 bytes), malformed multipart parameters and copy sources.
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

/**
 * Parses the request's target and classifies its operation, naming its bucket, key and operation on the exchange; the
 * error of a target that cannot be parsed.
 */
function nameRequest(exchange: Exchange): { target: RequestTarget; classified: ClassifiedOperation } | GatewayError {
  let target: RequestTarget;
  try {
    target = parseTarget(exchange.req.url);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  exchange.bucket = target.bucket;
  exchange.key = target.key;
  exchange.resource = target.resource;
  const classified = classifyOperation(exchange.method, target, exchange.req.headers);
  exchange.operation = classified.operation;
  return { target, classified };
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
  const { keys, storage } = options;
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
    const rules = origin !== null && target.bucket !== null ? await corsRulesOf(storage, target.bucket) : null;
    const rule = rules === null ? undefined : matchCorsRule(rules, origin!, exchange.method);
    if (rule === undefined) {
      const from = origin ?? 'a page of another site';
      const where = target.bucket === null ? 'the objstore' : `bucket ${target.bucket}`;
      throw new GatewayError(errors.crossOriginRefused(exchange.method, from, where));
    }
    for (const [name, value] of Object.entries(corsHeaders(rule, origin!))) exchange.res.setHeader(name, value);
  }

  /** Answers the request with an observer's fault; false when there is none and the request goes on. */
  async function injectFault(exchange: Exchange): Promise<boolean> {
    const fault: ObjstoreFault | null = options.observer ? await options.observer.arrive(exchange.req) : null;
    if (fault === null) return false;
    if (fault.kind === 'error') {
      for (const [name, value] of Object.entries(fault.headers)) exchange.res.setHeader(name, value);
      // A fault rule's error, made up by the user: the one answer not from the catalogue.
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
    if (options.acceptsHost && !options.acceptsHost(req.headers.host))
      throw new GatewayError(errors.foreignHost(req.headers.host!));
    // Before a fault rule may answer, so that its journal entry names the operation, bucket and key too. The rules act
    // on any request: one whose target cannot be parsed is refused after them.
    const named = nameRequest(exchange);
    if (await injectFault(exchange)) return;
    if (named instanceof GatewayError) throw named;
    const { target, classified } = named;
    const answer = OPERATION_HANDLERS[classified.operation];
    // A preflight changes nothing: it is answered from the bucket's rules, without authentication, as S3 does.
    if (classified.access.kind === 'anyone') {
      if (target.bucket !== null) validateBucketName(target.bucket);
      return answer(operationContext(exchange, target, classified, UNSIGNED));
    }
    await admitBrowser(exchange, target);
    // S3 names an existing bucket's region on HeadBucket whatever the answer, a 403 included:
    // clients find a bucket's region that way.
    const bucketRegion = classified.operation === 'HeadBucket' ? options.buckets.regionOf(target.bucket!) : undefined;
    if (bucketRegion !== undefined) exchange.res.setHeader('x-amz-bucket-region', bucketRegion);

    // A browser form upload carries its authentication in the form (post-object.ts), which also
    // checks the bucket's owner once it knows the form's key.
    const browserForm = classified.operation === 'PostObject';
    const admission = browserForm ? UNSIGNED : await admit(exchange, target, classified);
    validateRequest(classified, target, req);
    if (!browserForm) authorizeBuckets(classified, target, req, admission.key, options.buckets);
    await answer(operationContext(exchange, target, classified, admission));
  }

  function operationContext(
    exchange: Exchange,
    target: RequestTarget,
    classified: ClassifiedOperation,
    admission: Admission,
  ): OperationContext {
    const { key, payloadHash, chunkSignatures } = admission;
    return {
      exchange,
      target,
      subresource: classified.subresource,
      storage,
      buckets: options.buckets,
      keys,
      key,
      payloadHash,
      chunkSignatures,
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
