import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { S3ErrorSpec } from '../s3-errors.ts';
import { sendError } from './xml.ts';
import type { S3Operation } from '../s3-operations.ts';
import { headerText, whenResponseEnds } from '../../shared/response-capture.ts';
import { OBSERVED_BODY_BYTES, type ObjstoreObserver, type ObservedBody } from '../types.ts';

/** Per-request state shared by the gateway, the storage and the observer. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly requestId: string;
  /** `x-amz-id-2`, S3's HostId. */
  readonly hostId: string;
  /** The client sent `Expect: 100-continue` and is waiting before it sends the body. */
  readonly expectContinue: boolean;
  continueSent: boolean;
  operation: S3Operation;
  /** `Resource` of gateway error responses. */
  resource: string;
  bucket: string | null;
  key: string | null;
  accessKeyId: string | null;
  errorCode: string | null;
  /** Set once the gateway has authenticated and authorised the request. */
  authenticated: boolean;
  /** The body, when the gateway read it whole (request documents) rather than streaming it to the storage. */
  body: Buffer | null;
}

const exchanges = new WeakMap<IncomingMessage, Exchange>();

export function exchangeOf(req: IncomingMessage): Exchange | undefined {
  return exchanges.get(req);
}

function newRequestId(): string {
  return randomBytes(8).toString('hex').toUpperCase();
}

/**
 * Starts tracking a request: assigns the request id headers and hands the request to the
 * observer when its response ends (or the connection closes first).
 */
export function beginExchange(
  req: IncomingMessage,
  res: ServerResponse,
  expectContinue: boolean,
  observer?: ObjstoreObserver,
): Exchange {
  const method = (req.method ?? 'GET').toUpperCase();
  const exchange: Exchange = {
    req,
    res,
    method,
    requestId: newRequestId(),
    hostId: randomBytes(24).toString('base64'),
    expectContinue,
    continueSent: false,
    operation: 'Unknown',
    resource: '/',
    bucket: null,
    key: null,
    accessKeyId: null,
    errorCode: null,
    authenticated: false,
    body: null,
  };
  exchanges.set(req, exchange);

  res.setHeader('x-amz-request-id', exchange.requestId);
  res.setHeader('x-amz-id-2', exchange.hostId);

  // Observed when the response is ended rather than on 'finish', so the observer's record exists
  // before the client can possibly have read the complete response.
  if (observer) {
    whenResponseEnds(res, OBSERVED_BODY_BYTES, ({ status, cut, written }) => {
      const record = {
        method: exchange.method,
        operation: exchange.operation,
        bucket: exchange.bucket,
        key: exchange.key,
        accessKeyId: exchange.accessKeyId,
        status,
        errorCode: cut ? (exchange.errorCode ?? 'RequestAborted') : exchange.errorCode,
      };
      observer.complete({
        req,
        record,
        requestBody: requestBodyOf(exchange),
        responseBody: written,
        responseHeaders: written.headerPairs(),
      });
    });
  }

  return exchange;
}

function declaredSize(req: IncomingMessage): number | null {
  const declared = req.headers['x-amz-decoded-content-length'] ?? req.headers['content-length'];
  if (declared !== undefined) return Number(declared);
  return req.headers['transfer-encoding'] === undefined ? 0 : null;
}

/**
 * The request body: the first bytes of what the gateway read itself (copied: a view would keep
 * the whole body alive as long as the journal keeps the entry), else only its size (uploads and
 * browser forms stream to disk).
 */
function requestBodyOf(exchange: Exchange): ObservedBody {
  const contentType = headerText(exchange.req.headers['content-type']);
  if (exchange.body !== null)
    return {
      head: Buffer.from(exchange.body.subarray(0, OBSERVED_BODY_BYTES)),
      size: exchange.body.length,
      contentType,
    };
  const size = declaredSize(exchange.req);
  return { head: size === 0 ? Buffer.alloc(0) : null, size, contentType };
}

/** Answers with an S3 error from the gateway (no-op if a response was already started). */
export function failExchange(exchange: Exchange, error: S3ErrorSpec): void {
  const { res } = exchange;
  if (res.destroyed) {
    // The client is gone; the 'close' handler reports the request to the observer as aborted.
    return;
  }
  if (res.headersSent || res.writableEnded) {
    // Too late for an error document; cut the connection so the client sees a failure.
    exchange.errorCode ??= error.code;
    if (!res.writableEnded) res.destroy();
    return;
  }
  exchange.errorCode = error.code;
  sendError(res, exchange.method, error, exchange.resource, exchange);
}

/** Tells a client that sent `Expect: 100-continue` to go ahead with the body. */
export function sendContinue(exchange: Exchange): void {
  if (!exchange.expectContinue || exchange.continueSent || exchange.res.headersSent) return;
  exchange.continueSent = true;
  exchange.res.writeContinue();
}
