/**
 * The request pipeline in front of s3rver:
 *
 *   parse target -> classify operation -> extract credential -> look up key
 *   -> verify signature (slot) -> check permission -> validate names
 *   -> strip authentication -> operation override or s3rver
 *
 * Every step that refuses a request throws a GatewayError, answered as an S3 XML error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { S3rverBackend } from './backend.ts';
import { operationOverrides, type OperationContext, type OperationOverride } from './compat.ts';
import { extractCredential } from './credentials.ts';
import { errors, GatewayError } from './errors.ts';
import { beginExchange, failExchange, sendContinue, type Exchange } from './exchange.ts';
import { followWrites, type FileView } from './file-view.ts';
import type { RequestJournal } from './journal.ts';
import { classifyOperation, type ClassifiedOperation, type OperationAccess } from './operations.ts';
import { verifySignature } from './signature.ts';
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
import type { ObjstoreKey, ObjstoreKeyLookup } from './types.ts';

export interface GatewayOptions {
  keys: ObjstoreKeyLookup;
  backend: S3rverBackend;
  journal: RequestJournal;
  overrides?: Readonly<Partial<Record<string, OperationOverride>>>;
  /** Kept in step with every write before its response completes. */
  fileView?: FileView;
}

export type GatewayHandler = (req: IncomingMessage, res: ServerResponse, expectContinue: boolean) => void;

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
 * Rejects names s3rver's filesystem store cannot hold safely (it maps them straight onto
 * paths) and malformed multipart parameters s3rver would crash or misbehave on.
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
      resolve(Buffer.concat(chunks));
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
  const { keys, backend, journal } = options;
  const overrides = options.overrides ?? operationOverrides;

  async function handleExchange(exchange: Exchange): Promise<void> {
    const { req } = exchange;
    exchange.resource = (req.url ?? '/').split('?')[0] || '/';
    const target = parseTarget(req.url);
    exchange.bucket = target.bucket;
    exchange.key = target.key;
    exchange.resource = target.resource;

    const classified = classifyOperation(exchange.method, target, req.headers);
    exchange.operation = classified.operation;

    const credential = extractCredential(req.headers, target.query);
    if (credential === null) throw new GatewayError(errors.accessDenied());
    exchange.accessKeyId = credential.accessKeyId;

    const key = keys.find(credential.accessKeyId);
    if (key === undefined) throw new GatewayError(errors.invalidAccessKeyId());

    const verdict = verifySignature({ req, target, credential, key, now: new Date() });
    if (verdict.error !== null) throw new GatewayError(verdict.error);

    authorize(classified.access, key);
    validateRequest(classified, target, req);

    stripAuthentication(req, target);
    exchange.authenticated = true;

    const context: OperationContext = {
      exchange,
      target,
      backend,
      chunkSignatures: verdict.chunks,
      delegate: () => {
        sendContinue(exchange);
        backend.handle(req, exchange.res);
      },
      readBody: (limit) => readBody(exchange, limit),
    };
    const override = overrides[classified.operation];
    if (override) {
      await override(context);
    } else {
      context.delegate();
    }
  }

  return (req, res, expectContinue) => {
    let exchange: Exchange;
    try {
      exchange = beginExchange(req, res, expectContinue, journal);
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
      handleExchange(exchange).catch(fail);
    } catch (err) {
      fail(err);
    }
  };
}
